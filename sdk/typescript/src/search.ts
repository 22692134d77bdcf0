import { endsSearch, parseMessage, type SearchMessage } from "./messages.js";
import { errorOf, ProblemError, problemFrom } from "./problem.js";
import { RestPoller } from "./rest-poll.js";
import { bounded, REQUEST_TIMEOUT_MS } from "./timeout.js";

/** How a search reaches the server. */
export type Transport = "auto" | "websocket" | "rest";

/** A WebSocket constructor (the browser's, Node 22's, or the `ws` package's). */
export type WebSocketLike = new (url: string) => WebSocket;

/** Options of {@link search}. */
export interface SearchOptions {
  /** The server, e.g. `https://mm.example.com`. */
  baseUrl: string;
  /**
   * `auto` (default): the WebSocket, and REST polling when the socket cannot be
   * opened (a proxy refusing the upgrade); `websocket` or `rest` only.
   */
  transport?: Transport;
  /** Milliseconds between REST polls: default 2000, kept within 500..=20000 (the server ends a search not polled for 30 s). */
  pollIntervalMs?: number;
  /** A WebSocket constructor; default the global one, else the `ws` package (Node 20). */
  WebSocket?: WebSocketLike;
  /** A `fetch` of your own (default: the global one). */
  fetch?: typeof fetch;
  /**
   * Milliseconds one REST call (a poll, an answer, a cancel) may take, and the WebSocket may take
   * to open, before it counts as failed (default 15 000; 0: none). A poll that times out is tried
   * again like any failed poll; a start that times out rejects (`auto`: falls back to REST first).
   */
  requestTimeoutMs?: number;
  /**
   * Milliseconds the open WebSocket may stay silent before the search counts as cut: the iteration
   * rejects with a {@link SearchClosedError} `1006` (default 15 000; 0: never). Where the WebSocket
   * shows the server's pings (the `ws` package, Node 20), silence is no ping and no message. Where
   * it hides them (a browser's, Node 22's), the SDK sends the server a `{"type":"ping"}` text a few
   * times within the limit and silence is no `pong` and no message; a server too old to answer
   * `ping` is never taken for silent.
   */
  silenceTimeoutMs?: number;
}

/** The longest a REST search may go unpolled before the server ends it. */
export const REST_POLL_LIMIT_MS = 30_000;

/** @internal What the transports share with the `Search` handle. */
export interface Sink {
  push(message: SearchMessage): void;
  fail(error: unknown): void;
  end(): void;
}

/** @internal */
export interface Calls {
  base: string;
  token: string;
  fetcher: typeof fetch;
}

/** @internal `POST|GET|DELETE /v1/searches/{ticketId}[/verb]` with `Authorization: Ticket <token>`. */
export async function ticketCall(calls: Calls, method: string, ticketId: string, verb?: string, matchId?: string): Promise<unknown> {
  const named = matchId ? `?matchId=${encodeURIComponent(matchId)}` : "";
  const url = `${calls.base}/v1/searches/${encodeURIComponent(ticketId)}${verb ? `/${verb}` : ""}${named}`;
  const response = await calls.fetcher(url, { method, headers: { authorization: `Ticket ${calls.token}` } });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

/**
 * One running search: an async iterable of {@link SearchMessage}s (it ends
 * after the final message, and rejects with a {@link SearchClosedError} when
 * its socket closes before one), with `onMessage` listeners, `accept()`,
 * `decline()` and `cancel()`.
 */
export class Search implements AsyncIterable<SearchMessage> {
  /** `websocket` or `rest`: the transport in use. */
  transport: "websocket" | "rest" = "websocket";
  /** `tkt_…`, once known (after `searching` on the socket; at once over REST). */
  ticketId?: string;
  private queue: SearchMessage[] = [];
  private waiters: Array<{ resolve: (r: IteratorResult<SearchMessage>) => void; reject: (e: unknown) => void }> = [];
  private error: unknown;
  private ended = false;
  private listeners = new Set<(m: SearchMessage) => void>();
  private endListeners = new Set<(error?: unknown) => void>();
  /** The `matchId` of the last `proposed`, until a `requeued` or final message: the proposal an answer names. */
  private proposal?: string;
  /** @internal */ socket?: WebSocket;
  /** @internal */ poller?: RestPoller;

  /** @internal */
  constructor(readonly calls: Calls) {}

  /** @internal */
  readonly sink: Sink = {
    push: (message) => {
      if (this.ended) return;
      if (message.type === "searching") this.ticketId = message.ticketId;
      if (message.type === "proposed") this.proposal = message.matchId;
      else if (message.type === "requeued" || message.type === "matched" || message.type === "assignment_timeout" || endsSearch(message)) {
        this.proposal = undefined;
      }
      for (const l of this.listeners) l(message);
      const waiter = this.waiters.shift();
      if (waiter) waiter.resolve({ value: message, done: false });
      else this.queue.push(message);
    },
    fail: (error) => {
      if (this.ended) return;
      this.error = error;
      this.ended = true;
      for (const w of this.waiters.splice(0)) w.reject(error);
      this.told(error);
    },
    end: () => {
      const first = !this.ended;
      this.ended = true;
      for (const w of this.waiters.splice(0)) w.resolve({ value: undefined, done: true });
      if (first) this.told(undefined);
    },
  };

  /** Tells the `onEnd` listeners, once. */
  private told(error: unknown): void {
    const listeners = [...this.endListeners];
    this.endListeners.clear();
    for (const l of listeners) l(error);
  }

  /** Calls `listener` with every message from now on; returns the unsubscribe. */
  onMessage(listener: (m: SearchMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Calls `listener` once when the search ends: with no argument after its outcome (or `close()`),
   * with the error the iteration rejects with otherwise (a {@link SearchClosedError}, say). For
   * code that reads the search through {@link onMessage} alone. Called at once if it has ended.
   * Returns the unsubscribe.
   */
  onEnd(listener: (error?: unknown) => void): () => void {
    if (this.ended) {
      listener(this.error);
      return () => {};
    }
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  [Symbol.asyncIterator](): AsyncIterator<SearchMessage> {
    return {
      next: () => {
        const value = this.queue.shift();
        if (value) return Promise.resolve({ value, done: false });
        if (this.error !== undefined) return Promise.reject(this.error);
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
      },
      return: async () => {
        this.close();
        return { value: undefined, done: true };
      },
    };
  }

  /**
   * Accepts the open proposal, naming it (`{"type":"accept","matchId":…}` on the socket, `POST …/accept?matchId=…` over REST).
   * @throws ProblemError `NOT_PROPOSED` when no proposal is open (on the socket: no `proposed`
   * since the last `requeued` or final message); over REST also the server's `PROPOSAL_CLOSED`, …
   * @throws Error when the search's socket is closed.
   */
  accept(): Promise<void> {
    return this.answer("accept");
  }

  /**
   * Declines the open proposal (the player is cooled down in this mode).
   * @throws ProblemError `NOT_PROPOSED` when no proposal is open, as {@link accept}.
   * @throws Error when the search's socket is closed.
   */
  decline(): Promise<void> {
    return this.answer("decline");
  }

  private async answer(verb: "accept" | "decline"): Promise<void> {
    // The answer names the proposal it answers: one that closed meanwhile is refused, never
    // counted in the next one (docs/acceptance.md, "Naming the proposal").
    if (this.transport === "rest") {
      await ticketCall(this.calls, "POST", this.ticketId ?? "", verb, this.proposal);
      this.poller?.pollNow();
    } else {
      // The socket has no answer to a send, so refuse here what the server would refuse over REST.
      if (!this.socket || this.socket.readyState !== OPEN) throw new Error(`cannot ${verb}: the search's WebSocket is closed`);
      if (!this.proposal) throw notProposed();
      this.socket.send(JSON.stringify({ type: verb, matchId: this.proposal }));
    }
  }

  /**
   * Cancels: `DELETE /v1/searches/{ticketId}` once the id is known (then the
   * server's `cancelled` arrives), else closes the socket (which the server
   * takes as a cancel) and yields `cancelled` itself.
   * @throws ProblemError `TICKET_ALREADY_MATCHED` when the match came first.
   */
  async cancel(): Promise<void> {
    if (this.ticketId) {
      await ticketCall(this.calls, "DELETE", this.ticketId);
      this.poller?.pollNow();
      return;
    }
    this.socket?.close(1000);
    this.sink.push({ type: "cancelled" });
    this.sink.end();
  }

  /** Stops listening and ends the search (`cancelled`): closes the socket, or over REST stops polling and cancels it. */
  close(): void {
    this.socket?.close(1000);
    this.poller?.leave();
    this.sink.end();
  }
}

/**
 * The search's WebSocket closed before the search's outcome (a final message,
 * or `matched`; docs/searching.md, "Closing"): the iteration rejects with it. On `1001` the server is
 * stopping (a rolling restart): the search was ended `cancelled`, and
 * `searchAgain` says to call {@link search} again with the same ticket. Any
 * other code (`1006`: the connection broke) leaves the search to its socket
 * lease: search again after a few seconds (`409 SEARCH_ALREADY_ACTIVE`
 * meanwhile).
 */
export class SearchClosedError extends Error {
  /** The WebSocket close code (`1001`, `1006`, …). */
  readonly closeCode: number;
  /** The close frame's reason, `""` when none. */
  readonly closeReason: string;
  /** Whether the server asked to search again with the same ticket (`1001`). */
  readonly searchAgain: boolean;

  constructor(closeCode: number, closeReason: string) {
    super(`the search's WebSocket closed with ${closeCode}${closeReason ? ` (${closeReason})` : ""} before a final message`);
    this.name = "SearchClosedError";
    this.closeCode = closeCode;
    this.closeReason = closeReason;
    this.searchAgain = closeCode === 1001;
  }
}

/** @internal How long a socket may take to open, and stay silent once open (milliseconds; 0: no limit). */
interface Limits {
  openMs: number;
  silenceMs: number;
}

/** `WebSocket.OPEN` (the same in the browser's, Node 22's and the `ws` package's). */
const OPEN = 1;

/** The heartbeat the SDK sends where the server's pings are hidden; the server answers `{"type":"pong"}`. */
const PING = JSON.stringify({ type: "ping" });

/** Whether a message is the server's answer to the SDK's `ping` (never handed to the game). */
function isPong(message: SearchMessage): boolean {
  if (message.type !== "unknown") return false;
  const raw = message.raw as { type?: unknown } | null;
  return typeof raw === "object" && raw !== null && raw.type === "pong";
}

/** The problem the server answers an accept or decline without an open proposal (`409 NOT_PROPOSED`). */
function notProposed(): ProblemError {
  return new ProblemError({
    type: "about:blank", title: "Not proposed", status: 409, code: "NOT_PROPOSED",
    detail: "the ticket is in no match proposal", errors: [],
  });
}

async function webSocketClass(options: SearchOptions): Promise<WebSocketLike> {
  if (options.WebSocket) return options.WebSocket;
  const global = (globalThis as { WebSocket?: WebSocketLike }).WebSocket;
  if (global) return global;
  const ws = await import("ws");
  return ws.default as unknown as WebSocketLike;
}

/** Opens the socket; rejects with the server's problem when it refused the upgrade with one. */
function open(search: Search, Ctor: WebSocketLike, url: string, limits: Limits): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new Ctor(url);
    let opened = false;
    let given = false;
    // A server that takes the connection and never answers (a black-holed load balancer).
    const opening = limits.openMs > 0
      ? setTimeout(() => {
        given = true;
        reject(new Error(`the WebSocket did not open within ${limits.openMs} ms`));
        socket.close();
      }, limits.openMs)
      : undefined;
    const node = socket as unknown as { on?: (e: string, f: (...a: unknown[]) => void) => void };
    // Where the server's pings show (the `ws` package) they are the heartbeat. Elsewhere the SDK
    // sends its own `ping` texts, and silence is read once a `pong` showed that the server answers
    // them: before that, a quiet search could not be told from a cut one.
    const pingsShow = typeof node.on === "function";
    let watch = limits.silenceMs > 0 && pingsShow;
    let silence: ReturnType<typeof setTimeout> | undefined;
    let beating: ReturnType<typeof setInterval> | undefined;
    const heard = () => {
      if (!watch || !opened) return;
      clearTimeout(silence);
      silence = setTimeout(() => {
        search.sink.fail(new SearchClosedError(1006, `no word from the server for ${limits.silenceMs} ms`));
        socket.close();
      }, limits.silenceMs);
    };
    if (typeof node.on === "function") {
      // The server's pings show it is there (the `ws` package answers them itself).
      node.on("ping", heard);
      // The `ws` package: read the refusal's problem body.
      node.on("unexpected-response", (_req: unknown, res: unknown) => {
        const r = res as AsyncIterable<Uint8Array> & { statusCode: number; headers: Record<string, string> };
        (async () => {
          const chunks: Uint8Array[] = [];
          for await (const c of r) chunks.push(c);
          const text = new TextDecoder().decode(Buffer.concat(chunks));
          reject(problemFrom(r.statusCode, text, r.headers["retry-after"]));
        })().catch(reject);
      });
    }
    socket.onopen = () => {
      clearTimeout(opening);
      if (given) {
        // Opened after the start gave up on it: the search goes on elsewhere, or not at all.
        socket.close(1000);
        return;
      }
      opened = true;
      resolve(socket);
      heard();
      if (limits.silenceMs > 0 && !pingsShow) {
        const beat = () => {
          if (socket.readyState === OPEN) socket.send(PING);
        };
        beat();
        beating = setInterval(beat, Math.max(1_000, Math.floor(limits.silenceMs / 4)));
      }
    };
    socket.onerror = () => {
      if (!opened) reject(new Error("the WebSocket could not be opened"));
    };
    // Whether the search's outcome arrived: a final message, or `matched` (final unless the mode
    // waits for an assignment, which then comes before the close).
    let outcome = false;
    socket.onmessage = (event: MessageEvent) => {
      const message = parseMessage(typeof event.data === "string" ? event.data : String(event.data));
      if (isPong(message)) {
        watch = limits.silenceMs > 0;
        heard();
        return;
      }
      heard();
      search.sink.push(message);
      if (message.type === "matched") outcome = true;
      if (endsSearch(message)) {
        outcome = true;
        search.sink.end();
      }
    };
    // The server closes with 1000 once the search is over (after its final
    // message, or `matched` then the assignment's); any other close, and a
    // 1000 before the outcome (a proxy closing the connection), rejects the
    // iteration with why: the search may still be on.
    socket.onclose = (event: CloseEvent) => {
      clearTimeout(opening);
      clearTimeout(silence);
      clearInterval(beating);
      // A socket that never opened is the start's failure alone (`auto` goes on over REST):
      // the search it would have carried is not over.
      if (!opened) {
        reject(new Error(`the WebSocket could not be opened (${event.code})`));
        return;
      }
      if (event.code === 1000 && outcome) search.sink.end();
      else search.sink.fail(new SearchClosedError(event.code, event.reason ?? ""));
    };
  });
}

/**
 * Starts a search with a ticket's token (no API key).
 * @throws ProblemError `TICKET_INVALID`, `SEARCH_ALREADY_ACTIVE`, `PLAYER_ALREADY_SEARCHING`, …
 */
export async function search(token: string, options: SearchOptions): Promise<Search> {
  const base = options.baseUrl.replace(/\/+$/, "");
  const requestMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const fetcher = bounded(options.fetch ?? globalThis.fetch.bind(globalThis), requestMs);
  const calls: Calls = { base, token, fetcher };
  const limits: Limits = { openMs: requestMs, silenceMs: options.silenceTimeoutMs ?? 15_000 };
  const handle = new Search(calls);
  const transport = options.transport ?? "auto";
  if (transport !== "rest") {
    const wsUrl = `${base.replace(/^http/, "ws")}/v1/search?ticket=${encodeURIComponent(token)}`;
    try {
      handle.socket = await open(handle, await webSocketClass(options), wsUrl, limits);
      handle.transport = "websocket";
      return handle;
    } catch (error) {
      if (transport === "websocket" || (error as { code?: unknown }).code !== undefined) throw error;
    }
  }
  const interval = Math.min(20_000, Math.max(500, options.pollIntervalMs ?? 2_000));
  handle.transport = "rest";
  handle.poller = await RestPoller.start(calls, handle.sink, interval, (id) => (handle.ticketId = id));
  return handle;
}
