/**
 * One legacy system as the connector benchmark sees it (test/bench/connector-bench.ts): a fixture
 * of `size` messages, the raw read of the same data in the same process (the ceiling), and the
 * `source:` block that makes chatferry's connector read it.
 */
export interface RawRead {
  readonly rows: number
  readonly bytes: number
  readonly ms: number
}

export interface ConnectorBenchSystem {
  /** What is read, for the printed line: 'Mattermost messages on Postgres'. */
  readonly label: string
  /** What the raw read is: 'raw COPY'. */
  readonly rawName: string
  /** Builds the fixture of `size` messages unless one is kept from an earlier run (or `regenerate`). */
  prepare(size: number, regenerate: boolean): Promise<void>
  /** Reads the same messages raw (no records, no mapping), counting rows and bytes. */
  raw(size: number): Promise<RawRead>
  /**
   * Warms the caches both reads go through (the OS file cache) without growing this process's heap;
   * absent, the raw read warms them (a `COPY` streams: it leaves little behind).
   */
  warm?(size: number): Promise<void>
  /** The `source:` block for that fixture; `pageSize` is the bench's `--page-size`. */
  sourceConfig(size: number, pageSize: number): Record<string, unknown>
}
