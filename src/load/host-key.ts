import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

/** This machine, as far as PIDs are comparable: hostname plus the kernel's boot id. */
export function hostKey(): string {
  let boot = ''
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().slice(0, 8)
  } catch {
    // not Linux
  }
  return `${hostname()}${boot ? `#${boot}` : ''}`
}
