/** Durations for people: `1d02h`, `3h05m`, `4m07s`, `12s`; `∞` when there is no end. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) {
    return '∞'
  }
  const s = Math.max(0, Math.round(seconds))
  const d = Math.floor(s / 86_400)
  const h = Math.floor((s % 86_400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  const sec = s % 60
  if (d > 0) {
    return `${d}d${String(h).padStart(2, '0')}h`
  }
  if (h > 0) {
    return `${h}h${String(m).padStart(2, '0')}m`
  }
  if (m > 0) {
    return `${m}m${String(sec).padStart(2, '0')}s`
  }
  return `${sec}s`
}
