import type { Command } from 'commander'

/** Every command, in the order `chatferry --help` lists them. */
export const COMMANDS: ((program: Command) => void)[] = []
