/**
 * What `fleet run` tells the fleet file's `notify:` hooks: a tenant that ended needing a fix
 * (`fleet.tenant.needs-fix`) — its key or app refused, its configuration or source invalid, its
 * binding unusable — the moment it ends, so the operator hears of it while the other tenants go
 * on, not days later when the fleet finishes. A tenant that failed for a reason a rerun can fix (an
 * outage) is the exit code's business, not a notification's. The reason carries no secret (see
 * TenantOutcome), and the notifier scrubs the fleet file's secrets from every text besides.
 */
import type { Notification } from '../job/notify/notifier.ts'
import type { TenantOutcome } from './fleet-run-outcome.ts'

/** The notification for a tenant's end, or undefined when it does not need a fix. */
export function tenantNeedsFixNotification(
  fleetId: string,
  o: Pick<TenantOutcome, 'tenantId' | 'jobId' | 'state' | 'needsFix' | 'reason'>,
): Notification | undefined {
  if (o.state !== 'failed' || !o.needsFix) {
    return undefined
  }
  return {
    event: 'fleet.tenant.needs-fix',
    jobId: o.jobId,
    summary: `fleet ${fleetId}: tenant ${o.tenantId} needs a fix before it can run${o.reason ? `: ${o.reason}` : ''} (then fleet run --tenant ${o.tenantId})`,
    details: { fleet: fleetId, tenantId: o.tenantId, state: o.state, reason: o.reason ?? null },
  }
}
