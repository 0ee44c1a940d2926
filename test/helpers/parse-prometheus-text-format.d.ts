/** Types for parse-prometheus-text-format (it ships none): the prom2json shape it returns. */
declare module 'parse-prometheus-text-format' {
  export interface PromSample {
    readonly labels?: Record<string, string>
    readonly value?: string
    readonly buckets?: Record<string, string>
    readonly quantiles?: Record<string, string>
    readonly count?: string
    readonly sum?: string
  }
  export interface PromFamily {
    readonly name: string
    readonly help: string
    readonly type: 'COUNTER' | 'GAUGE' | 'SUMMARY' | 'HISTOGRAM' | 'UNTYPED'
    readonly metrics: PromSample[]
  }
  export default function parsePrometheusTextFormat(text: string): PromFamily[]
}
