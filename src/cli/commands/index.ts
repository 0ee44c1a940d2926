import type { Command } from 'commander'
import { registerAppsCommand } from './apps.ts'
import { registerConfigCommand } from './config.ts'

/** Every command, in the order `chatferry --help` lists them. */
export const COMMANDS: ((program: Command) => void)[] = [registerConfigCommand, registerAppsCommand]
