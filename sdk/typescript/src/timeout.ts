/**
 * The default limit on one HTTP call (request and answer), and on opening a search's WebSocket:
 * above the server's own 10 s bound on a request, so that its `503` with `Retry-After` arrives
 * first and only a silent connection runs into this one.
 */
export const REQUEST_TIMEOUT_MS = 15_000;

/**
 * @internal `fetcher` with every call bounded by `ms` (its body read included): a connection that
 * goes silent (a cut network, a black-holed load balancer) rejects with a `TimeoutError` instead of
 * waiting for the operating system to give up, minutes later. A call that brings its own `signal`
 * keeps it. `0` or less: no bound.
 */
export function bounded(fetcher: typeof fetch, ms: number): typeof fetch {
  if (!(ms > 0) || typeof AbortSignal.timeout !== "function") return fetcher;
  return (input, init) => fetcher(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(ms) });
}
