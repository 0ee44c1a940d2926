import type { Command } from 'commander'

import { registerAcceptRejectsCommand } from './accept-rejects.ts'
import { registerAppsCommand } from './apps.ts'
import { registerCompletionCommand } from './completion.ts'
import { registerConfigCommand } from './config.ts'
import { registerCursorsCommand } from './cursors.ts'
import { registerDashboardCommand } from './dashboard.ts'
import { registerDemoCommand } from './demo.ts'
import { registerFilesCommand } from './files.ts'
import { registerFleetCommand } from './fleet.ts'
import { registerFleetRunCommands } from './fleet-run.ts'
import { registerLoadCommand } from './load.ts'
import { registerPlanCommand } from './plan.ts'
import { registerPurgeCommand } from './purge.ts'
import { registerRejectsCommand } from './rejects.ts'
import { registerRetryRejectedCommand } from './retry-rejected.ts'
import { registerRunCommand } from './run.ts'
import { registerRunsCommand } from './runs.ts'
import { registerSandboxCommand } from './sandbox.ts'
import { registerScheduleCommand } from './schedule.ts'
import { registerSchedulesCommand } from './schedules.ts'
import { registerStatusCommand } from './status.ts'
import { registerUnscheduleCommand } from './unschedule.ts'
import { registerVerifyCommand } from './verify.ts'
import { registerWebhooksCommand } from './webhooks.ts'
import { registerWorkerCommand } from './worker.ts'

/** Every command, in the order `chatferry --help` lists them. */
export const COMMANDS: ((program: Command) => void)[] = [
  registerDemoCommand,
  registerConfigCommand,
  registerAppsCommand,
  registerWebhooksCommand,
  registerFleetCommand,
  // After the fleet group (registerFleetCommand): adds run, worker, status, plan and verify to it.
  registerFleetRunCommands,
  registerSandboxCommand,
  registerPlanCommand,
  registerRunCommand,
  registerLoadCommand,
  registerWorkerCommand,
  registerScheduleCommand,
  registerUnscheduleCommand,
  registerSchedulesCommand,
  registerStatusCommand,
  registerRejectsCommand,
  registerCursorsCommand,
  registerFilesCommand,
  registerRunsCommand,
  registerDashboardCommand,
  registerRetryRejectedCommand,
  registerAcceptRejectsCommand,
  registerVerifyCommand,
  registerPurgeCommand,
  registerCompletionCommand,
]
