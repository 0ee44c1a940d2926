/** The ledger (state store): see `store.ts`. */
export type { ConflictOutcome } from './conflict-hold.ts'
export type { ConflictCandidate, ConflictPreview, DryRunLedger, DryRunSession, KnownItemRow, LoadedItemRow, PlanParentRow } from './dry-run-ledger.ts'
export { attachFiles, missingFilesNote } from './file-payload.ts'
export type { ClaimedFile, FileAttemptFailure, FileClaim, FileCopy, FileCounts, FileRow, FilesLedger, SizedStoreKey } from './files-ledger.ts'
export type { FleetBinding, FleetLedger, FleetTenantPatch, ProvisionSteps } from './fleet-ledger.ts'
export { ledgerSortKey, placeholderKey } from './payload.ts'
export type { IdMapRow, LookupItemRow, PlanLookups } from './plan-lookups.ts'
export type {
  PlatformConflict,
  PlatformDelivery,
  PlatformEventsLedger,
  RecordedDelivery,
  UpdateConflict,
  WebhookReceiver,
} from './platform-events-ledger.ts'
export type { ReportArchive, ReportKind } from './report-archive.ts'
export { payloadJsonb, storableText } from './safe-text.ts'
export * from './schema.ts'
export type { OpenWorkRow, StatusLookups } from './status-lookups.ts'
export * from './store.ts'
export { linkCandidates, matchesWithLinks, replaceTextLinks } from './text-links.ts'
export type { ClaimedUpdate, UpdateHandBack, UpdateLaneLedger, UpdateReject } from './update-lane-ledger.ts'
export type {
  KeyComparison,
  RecordedUpdates,
  UpdateCountRow,
  UpdateIntent,
  UpdatePlanLedger,
  UpdateSampleRow,
  VanishedDecider,
  VanishedGate,
  VanishedItemRow,
  VanishedOutcome,
} from './update-plan-ledger.ts'
export { addRecorded, noUpdates, VANISHED_REASON } from './update-plan-ledger.ts'
export type { ConversationCountRow, ConversationMessageRow, ItemStateRow, ItemUpdateRow, MessageSampleRow, VerifyLookups } from './verify-lookups.ts'
