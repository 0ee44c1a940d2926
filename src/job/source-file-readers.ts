/**
 * The job's own file readers for the files lane (issue 27): the connector's `files()` reader,
 * registered under the connector's id — the `reader` every locator of that connector names
 * (`mattermost`, `slack-export`, `generic-sql`, `twilio-conversations`, …; a locator naming
 * `http` is read by the lane's shared HTTP reader). Made at the lane's start, before the store is
 * asked anything or any file downloaded, so a file source that is set wrong (a data directory
 * that does not exist) fails as a configuration error naming the field, not as one `missing` per
 * file. A connector without `files()` (or without `source.files`) adds none.
 */
import { createConnector, type SourceConfig } from '../../connectors/index.ts'
import type { FileReader } from '../model/files.ts'
import type { JobReaders } from '../report/files-plan.ts'
import type { ResolvedConfig } from './config.ts'

/** The readers of the job's source by id; throws the connector's ChatferryError (CONFIG_INVALID) for a file source set wrong. */
export function sourceFileReaders(source: ResolvedConfig['source']): Record<string, FileReader> {
  if (source === undefined) {
    return {}
  }
  // The resolved config is deeply readonly; connectors only read their settings.
  const connector = createConnector(source as SourceConfig)
  const reader = connector.files?.()
  return reader === undefined ? {} : { [connector.id]: reader }
}

/**
 * The reader ids the job has (`http` and its connector's), for `plan` under rehost; a connector
 * reader that cannot be made gives its configuration error as `problem`. The readers are closed again.
 */
export async function jobReaderIds(source: ResolvedConfig['source']): Promise<JobReaders> {
  let readers: Record<string, FileReader>
  try {
    readers = sourceFileReaders(source)
  } catch (err) {
    return { ids: new Set(['http']), problem: err instanceof Error ? err.message : String(err) }
  }
  await Promise.all(Object.values(readers).map((r) => r.close?.()))
  return { ids: new Set(['http', ...Object.keys(readers)]) }
}
