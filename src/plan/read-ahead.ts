/**
 * The pages of a read, one asked for ahead: while a page is mapped and written, the source already
 * runs the query of the next (on its own connection), so the source's time and ours overlap
 * instead of adding up. At most one page more is held in memory. When the consumer stops early
 * (a throw, an abort), the page asked for ahead is awaited and the read closed, as `for await` would.
 */
export async function* readAhead<T>(pages: AsyncIterable<T>): AsyncGenerator<T> {
  const it = pages[Symbol.asyncIterator]()
  let next = it.next()
  let done = false
  try {
    for (;;) {
      const r = await next
      if (r.done) {
        done = true
        return
      }
      next = it.next()
      // Keeps an early failure of the page asked for ahead from being reported as unhandled; it is
      // seen when that page is awaited.
      next.catch(() => {})
      yield r.value
    }
  } finally {
    if (!done) {
      await next.catch(() => {})
      await it.return?.()
    }
  }
}
