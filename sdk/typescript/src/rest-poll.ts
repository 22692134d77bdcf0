import type { PlayerMatch, SearchMessage } from "./messages.js";

/** Why an expired search expired, as the `expired` message types it. */
type ExpiredReason = Extract<SearchMessage, { type: "expired" }>["reason"];
import { errorOf, HttpError, ProblemError } from "./problem.js";
import { REST_POLL_LIMIT_MS, ticketCall, type Calls, type Sink } from "./search.js";

/** Keeps this much of the 30 s limit in hand for the poll itself. */
const MARGIN_MS = 5_000;

type Polled = Record<string, unknown> & { status?: string };

/** Whether a waiting reason is `MATCH_PENDING`: the match is being stored. */
function matchPending(reason: unknown): boolean {
  return typeof reason === "object" && reason !== null && (reason as { code?: unknown }).code === "MATCH_PENDING";
}

/** @internal The REST fallback: polls `GET /v1/searches/{ticketId}` and tells what changed. */
export class RestPoller {
  private timer?: ReturnType<typeof setTimeout>;
  private stopped = false;
  private lastOk = Date.now();
  private told = { searching: false, status: "", proposal: "", matched: false, held: false };

  private constructor(private calls: Calls, private sink: Sink, private interval: number, private ticketId: string) {}

  static async start(calls: Calls, sink: Sink, interval: number, onId: (id: string) => void): Promise<RestPoller> {
    const id = await RestPoller.begin(calls);
    onId(id);
    const poller = new RestPoller(calls, sink, interval, id);
    poller.schedule(0);
    return poller;
  }

  private static async begin(calls: Calls): Promise<string> {
    const response = await calls.fetcher(`${calls.base}/v1/searches`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ticket: calls.token }),
    });
    if (!response.ok) throw await errorOf(response);
    const started = (await response.json()) as { ticketId: string };
    return started.ticketId;
  }

  pollNow(): void {
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /**
   * Stops polling and, unless the search is already over, ends it with `DELETE /v1/searches/{ticketId}`
   * (best effort), as closing a socket does: a search left to lapse could be matched meanwhile.
   */
  leave(): void {
    if (this.stopped) return;
    this.stop();
    ticketCall(this.calls, "DELETE", this.ticketId).catch(() => {});
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), ms);
  }

  private async poll(): Promise<void> {
    let status: Polled;
    try {
      status = (await ticketCall(this.calls, "GET", this.ticketId)) as Polled;
    } catch (error) {
      const code = error instanceof ProblemError || error instanceof HttpError ? error.status : 0;
      const retryable = code === 0 || code === 429 || code >= 500;
      const left = REST_POLL_LIMIT_MS - MARGIN_MS - (Date.now() - this.lastOk);
      if (!retryable || left <= 0) {
        this.stop();
        this.sink.fail(error);
        return;
      }
      const asked = error instanceof ProblemError && error.retryAfter !== undefined ? error.retryAfter * 1000 : this.interval;
      this.schedule(Math.max(200, Math.min(asked, left)));
      return;
    }
    this.lastOk = Date.now();
    const { messages, over, restart } = this.messages(status);
    for (const m of messages) this.sink.push(m);
    if (over) {
      this.stop();
      this.sink.end();
      return;
    }
    if (restart) {
      try {
        await RestPoller.begin(this.calls);
      } catch {
        // the next poll tells what the ticket became
      }
    }
    this.schedule(this.interval);
  }

  /**
   * `searching`, once and first: also when the first poll already reads the
   * search proposed or matched (a cycle ran between the start and that
   * poll), as the socket always tells it first.
   */
  private searchingOnce(s: Polled, out: SearchMessage[]): void {
    if (this.told.searching) return;
    this.told.searching = true;
    out.push({ type: "searching", ticketId: String(s.ticketId), gameMode: String(s.gameMode), queuedAt: String(s.queuedAt ?? "") });
  }

  /** The messages a polled status adds, whether the search is over, and whether to start again. */
  messages(s: Polled): { messages: SearchMessage[]; over: boolean; restart: boolean } {
    const out: SearchMessage[] = [];
    const t = this.told;
    switch (s.status) {
      case "searching":
      case "created": {
        // After the last accept the ticket reads `searching` with
        // `MATCH_PENDING` until the match is stored (docs/searching.md,
        // "Matched" means stored): still held, not back in the queue.
        if (t.held && !matchPending(s.waitingReason)) {
          out.push({ type: "requeued" });
          t.held = false;
          t.status = "";
        }
        this.searchingOnce(s, out);
        // A status whenever what it says changes, as the socket sends them (docs/searching.md),
        // and the wait's whole seconds too: over REST no ping changes to carry a newer wait.
        const wait = Math.floor(Number(s.waitSeconds ?? 0));
        const key = JSON.stringify([s.waitingReason ?? null, s.found ?? null, s.needed ?? null, s.roleWaits ?? null, wait]);
        if (key !== t.status) {
          t.status = key;
          const m: SearchMessage = { type: "status", waitSeconds: Number(s.waitSeconds ?? 0), pingMs: null, waitingReason: (s.waitingReason as never) ?? null };
          if (typeof s.found === "number") m.found = s.found;
          if (typeof s.needed === "number") m.needed = s.needed;
          if (s.roleWaits && typeof s.roleWaits === "object") m.roleWaits = s.roleWaits as Record<string, number>;
          out.push(m);
        }
        return { messages: out, over: false, restart: false };
      }
      case "proposed": {
        this.searchingOnce(s, out);
        const p = (s.proposal ?? {}) as Record<string, unknown>;
        if (typeof p.matchId === "string" && p.matchId !== t.proposal) {
          t.proposal = p.matchId;
          t.held = true;
          out.push({ ...p, type: "proposed", matchId: p.matchId, acceptBy: String(p.acceptBy) });
        }
        return { messages: out, over: false, restart: false };
      }
      case "matched": {
        this.searchingOnce(s, out);
        if (!t.matched) {
          t.matched = true;
          out.push({ type: "matched", match: (s.match ?? { matchId: "" }) as PlayerMatch });
        }
        if (!("assignment" in s)) return { messages: out, over: true, restart: false };
        if (s.assignment === null) {
          t.held = true;
          return { messages: out, over: false, restart: false };
        }
        const a = s.assignment as { connection: string; data?: Record<string, unknown> };
        out.push({ type: "assigned", connection: a.connection, data: a.data ?? {} });
        return { messages: out, over: true, restart: false };
      }
      case "released": {
        // As a socket is told (docs/acceptance.md): `assignment_timeout`
        // when `reason` says so (docs/searching.md, "Statuses"), then
        // `requeued` at once, as the search starts again (the next cycle
        // may match it before a poll reads it searching).
        if (t.matched) {
          if (s.reason === "ASSIGNMENT_TIMEOUT") out.push({ type: "assignment_timeout" });
          out.push({ type: "requeued" });
          t.status = "";
        }
        t.held = !t.matched;
        t.matched = false;
        t.proposal = "";
        return { messages: out, over: false, restart: true };
      }
      case "cancelled":
        return { messages: [{ type: "cancelled" }], over: true, restart: false };
      case "expired":
        return { messages: [{ type: "expired", ...(s.reason ? { reason: s.reason as ExpiredReason } : {}) }], over: true, restart: false };
      case "failed": {
        const e = (s.error ?? {}) as { code?: string; message?: string };
        return { messages: [{ type: "failed", code: e.code ?? "", message: e.message ?? "" }], over: true, restart: false };
      }
      default:
        return { messages: [{ type: "unknown", raw: s }], over: false, restart: false };
    }
  }
}
