import type { Command } from 'commander'
import { registerAppsCommand } from './apps.ts'
import { registerConfigCommand } from './config.ts'
import { registerDemoCommand } from './demo.ts'
import { registerSandboxCommand } from './sandbox.ts'
import { registerLoadCommand } from './load.ts'
import { registerRunCommand } from './run.ts'
import { registerWorkerCommand } from './worker.ts'
import { registerStatusCommand } from './status.ts'
import { registerRejectsCommand } from './rejects.ts'
import { registerRetryRejectedCommand } from './retry-rejected.ts'
import { registerPlanCommand } from './plan.ts'
import { registerVerifyCommand } from './verify.ts'
import { registerWebhooksCommand } from './webhooks.ts'

/** Every command, in the order `chatferry --help` lists them. */
export const COMMANDS: ((program: Command) => void)[] = [registerDemoCommand, registerConfigCommand, registerAppsCommand, registerWebhooksCommand, registerSandboxCommand, registerPlanCommand, registerRunCommand, registerLoadCommand, registerWorkerCommand, registerStatusCommand, registerRejectsCommand, registerRetryRejectedCommand, registerVerifyCommand]
