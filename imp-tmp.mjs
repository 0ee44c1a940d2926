import { registerHooks } from 'node:module'
let n = 0
registerHooks({ load(url, ctx, next) { n++; return next(url, ctx) } })
const c0 = process.cpuUsage()
await import(process.argv[2])
const c = process.cpuUsage(c0)
console.log(process.argv[2].padEnd(40), n, 'modules', ((c.user+c.system)/1000).toFixed(0), 'ms cpu')
