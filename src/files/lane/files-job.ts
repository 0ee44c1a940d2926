/** What the files lane needs of a job's configuration: its `files:` settings and where its state lives (the spool's default place). */
import type { FilesConfig } from '../config.ts'

export interface ResolvedFilesJob {
  readonly files: FilesConfig
  /** `state.dir`: the spool defaults to `<state.dir>/files-spool`. */
  readonly stateDir: string
}
