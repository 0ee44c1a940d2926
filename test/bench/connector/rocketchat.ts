/**
 * Rocket.Chat from a mongodump directory for the connector benchmark. Raw: the messages file read
 * in 4 MiB chunks, split at each document's int32 length prefix and every document deserialised
 * with `bson` (the same library and options as the connector): the ceiling of reading a dump.
 * Generated dumps (the small fixture's users and rooms + `size` messages) are kept under the
 * system's temporary directory (`chatferry-bench-rc/<size>/`) and reused.
 */
import { closeSync, existsSync, openSync, readSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { deserialize } from 'bson'

import { DB_NAME } from '../../fixtures/rocketchat/dump.ts'
import { writeLargeRocketChatDump } from '../../fixtures/rocketchat/large.ts'
import type { ConnectorBenchSystem, RawRead } from './system.ts'

const rootOf = (size: number) => join(tmpdir(), 'chatferry-bench-rc', String(size))
const pathOf = (size: number) => join(rootOf(size), DB_NAME)
const messagesFile = (size: number) => join(pathOf(size), 'rocketchat_message.bson')

function rawRead(file: string): RawRead {
  const started = performance.now()
  const size = statSync(file).size
  const fd = openSync(file, 'r')
  let buf = Buffer.allocUnsafe(4 * 1024 * 1024)
  let start = 0 // file position of buf[0]
  let len = 0 // bytes of the file in buf
  let rows = 0
  let pos = 0
  const refill = (need: number) => {
    if (need > buf.length) {
      buf = Buffer.allocUnsafe(need)
    }
    start = pos
    len = readSync(fd, buf, 0, buf.length, pos)
    return len >= need
  }
  try {
    while (pos < size) {
      if (pos + 4 > start + len && !refill(4)) {
        break // a truncated tail: no length prefix
      }
      const n = buf.readInt32LE(pos - start)
      if (pos + n > start + len && !refill(n)) {
        break // a truncated tail: the document is cut short
      }
      deserialize(buf.subarray(pos - start, pos - start + n), { promoteLongs: true, promoteValues: true, promoteBuffers: false })
      rows++
      pos += n
    }
  } finally {
    closeSync(fd)
  }
  return { rows, bytes: size, ms: performance.now() - started }
}

const rocketchat: ConnectorBenchSystem = {
  label: 'Rocket.Chat messages from a mongodump directory',
  rawName: 'BSON deserialisation',
  prepare(size, regenerate) {
    if (regenerate || !existsSync(messagesFile(size))) {
      rmSync(rootOf(size), { recursive: true, force: true })
      writeLargeRocketChatDump(rootOf(size), size)
    }
    return Promise.resolve()
  },
  raw: (size) => Promise.resolve(rawRead(messagesFile(size))),
  sourceConfig: (size, pageSize) => ({ connector: 'rocketchat', path: pathOf(size), pageSize }),
}
export default rocketchat
