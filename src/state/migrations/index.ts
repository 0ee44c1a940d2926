import type { Migration } from 'kysely/migration'

import * as createLedger from './2025_06_01_0900_create_ledger.ts'
import * as createReports from './2026_11_21_1700_create_reports.ts'
import * as runStatusInterrupted from './2026_11_23_1400_run_status_interrupted.ts'
import * as createUpdates from './2026_11_26_0900_create_updates.ts'
import * as createFleetTenants from './2026_11_26_1200_create_fleet_tenants.ts'
import * as createPlatformEvents from './2026_11_26_1500_create_platform_events.ts'
import * as createAcceptedRejects from './2026_11_27_0300_create_accepted_rejects.ts'
import * as createFiles from './2026_11_27_0500_create_files.ts'
import * as filesCopiedKeyIdx from './2026_11_27_0700_files_copied_key_idx.ts'
import * as filesLegacyUrlIndex from './2026_11_27_0700_files_legacy_url_index.ts'

/** Every ledger migration, by name; names sort in the order they run. */
export const MIGRATIONS: Record<string, Migration> = {
  '2025_06_01_0900_create_ledger': createLedger,
  '2026_11_21_1700_create_reports': createReports,
  '2026_11_23_1400_run_status_interrupted': runStatusInterrupted,
  '2026_11_26_0900_create_updates': createUpdates,
  '2026_11_26_1200_create_fleet_tenants': createFleetTenants,
  '2026_11_26_1500_create_platform_events': createPlatformEvents,
  '2026_11_27_0300_create_accepted_rejects': createAcceptedRejects,
  '2026_11_27_0500_create_files': createFiles,
  '2026_11_27_0700_files_legacy_url_index': filesLegacyUrlIndex,
  '2026_11_27_0700_files_copied_key_idx': filesCopiedKeyIdx,
}
