/**
 * Reading channel after channel without waiting between them: while one channel's rows are
 * consumed, the next channel's first page is already asked for. Pages within one channel depend on
 * the page before (a token, a last message id) and cannot overlap, but channels are independent;
 * with one request in flight at a time, a read would run at 1 ÷ the request's latency, below the
 * source's limit whenever a round trip is slower than its pacing gap. Order is kept (rows come
 * channel by channel, as without read-ahead); memory holds at most the next channel's first page.
 */

/** The rows of `rowsOf(item)` for every item, in order, the next item's first batch asked for early. */
export async function* readAhead<C, T>(items: AsyncIterable<C>, rowsOf: (item: C) => AsyncGenerator<T>): AsyncGenerator<T> {
  const source = items[Symbol.asyncIterator]()
  const prime = (item: C) => {
    const gen = rowsOf(item)
    const first = gen.next()
    first.catch(() => {}) // observed when its turn comes
    return { gen, first }
  }
  let head = await source.next()
  if (head.done === true) {
    return
  }
  let current = prime(head.value)
  for (;;) {
    let next: ReturnType<typeof prime> | undefined
    try {
      head = await source.next()
      next = head.done === true ? undefined : prime(head.value)
      for (let r = await current.first; r.done !== true; r = await current.gen.next()) {
        yield r.value
      }
    } catch (err) {
      await next?.gen.return(undefined).catch(() => {})
      throw err
    } finally {
      await current.gen.return(undefined).catch(() => {})
    }
    if (next === undefined) {
      return
    }
    current = next
  }
}

/** The items of an iterable of batches, one by one. */
export async function* flat<C>(batches: AsyncIterable<readonly C[]>): AsyncGenerator<C> {
  for await (const batch of batches) {
    yield* batch
  }
}
