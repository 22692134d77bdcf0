import type { components } from "./generated/openapi.js";

/** The server's problem body (`application/problem+json`). */
export type ProblemBody = components["schemas"]["Problem"];
/** One failed field rule of a problem's `errors`. */
export type FieldError = components["schemas"]["ProblemFieldError"];

/** A problem answer of the server, thrown by every call of this SDK. */
export class ProblemError extends Error {
  /** The HTTP status, e.g. `422`. */
  readonly status: number;
  /** The stable machine-readable code, e.g. `PARTY_TOO_LARGE`. */
  readonly code: string;
  /** Short human summary of the code. */
  readonly title: string;
  /** What went wrong with this request. */
  readonly detail: string;
  /** Every failed field rule (empty when the error is not about fields). */
  readonly errors: FieldError[];
  /** The live ticket, for `PLAYER_ALREADY_SEARCHING`; the player's seat in the match, for `PLAYER_IN_MATCH`. */
  readonly ticketId?: string;
  /** The match waiting for its assignment, for `PLAYER_IN_MATCH` (assign or release it to free the player). */
  readonly matchId?: string;
  /** The open backfill, for `BACKFILL_ALREADY_OPEN`. */
  readonly backfillId?: string;
  /** The live ticket's mode, for `PLAYER_ALREADY_SEARCHING`; the match's mode, for `PLAYER_IN_MATCH`. */
  readonly gameMode?: string;
  /** Seconds to wait: the `Retry-After` header, else the body's `retryAfterSeconds`. */
  readonly retryAfter?: number;
  /** The whole body as received. */
  readonly body: Record<string, unknown>;

  constructor(body: Record<string, unknown>, retryAfterHeader?: string | null) {
    super(`${body.status} ${body.code}: ${body.detail ?? ""}`);
    this.name = "ProblemError";
    this.body = body;
    this.status = Number(body.status);
    this.code = String(body.code);
    this.title = String(body.title ?? "");
    this.detail = String(body.detail ?? "");
    this.errors = Array.isArray(body.errors) ? (body.errors as FieldError[]) : [];
    if (typeof body.ticketId === "string") this.ticketId = body.ticketId;
    if (typeof body.matchId === "string") this.matchId = body.matchId;
    if (typeof body.backfillId === "string") this.backfillId = body.backfillId;
    if (typeof body.gameMode === "string") this.gameMode = body.gameMode;
    const header = retryAfterHeader != null ? Number(retryAfterHeader) : NaN;
    const inBody = Number(body.retryAfterSeconds);
    if (Number.isFinite(header)) this.retryAfter = header;
    else if (Number.isFinite(inBody)) this.retryAfter = inBody;
  }
}

/** An error status without a problem body (e.g. from a proxy). */
export class HttpError extends Error {
  constructor(readonly status: number, readonly body: string) {
    super(`HTTP ${status}: ${body.slice(0, 200)}`);
    this.name = "HttpError";
  }
}

/** The error an unsuccessful answer stands for. */
export async function errorOf(response: Response): Promise<ProblemError | HttpError> {
  const text = await response.text();
  return problemFrom(response.status, text, response.headers.get("retry-after"));
}

/** A problem from a status and body text, or an `HttpError` when the body is not one. */
export function problemFrom(status: number, text: string, retryAfter?: string | null): ProblemError | HttpError {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (body && typeof body === "object" && typeof body.code === "string") {
      return new ProblemError(body, retryAfter);
    }
  } catch {
    // not JSON: below
  }
  return new HttpError(status, text.slice(0, 1024));
}
