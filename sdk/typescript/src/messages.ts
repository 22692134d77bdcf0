import type { components } from "./generated/openapi.js";

type Schemas = components["schemas"];
/** The document's `proposed` message. */
type ProposedDoc = Extract<Schemas["SearchMessage"], { type: "proposed" }>;

/** The game client's view of its match (the document's `PlayerMatch`): teams, its own entry, quality, … */
export type PlayerMatch = Schemas["PlayerMatch"];

/**
 * Why a search is still waiting, as the document types it: one variant per
 * `code` (e.g. `RULE_NOT_MET` with `rule` and `unblocksInSeconds`,
 * `NO_ROLE_SEATING` with `short`), narrowed by a `switch` on `code`.
 */
export type WaitingReason = Schemas["SearchWaitingReason"];

/** A reason narrowed on its `code` reads that code's fields (a compile-time check). */
const _narrows = (r: WaitingReason): [string, number | null | undefined] | undefined =>
  r.code === "RULE_NOT_MET" ? [r.rule, r.unblocksInSeconds] : undefined;
void _narrows;

/**
 * One message of a search: the WebSocket's JSON text messages, and the same
 * events derived from REST polling. A message this SDK does not know arrives
 * as `{type: "unknown", raw}`, never as an error.
 */
export type SearchMessage =
  | { type: "searching"; ticketId: string; gameMode: string; queuedAt: string }
  | {
      type: "status"; waitSeconds: number; pingMs?: number | null; waitingReason?: WaitingReason | null; found?: number; needed?: number;
      /** In a mode with `composition`: the median wait (seconds) of the players matched in each role the ticket listed. */
      roleWaits?: Record<string, number>;
    }
  | {
      type: "proposed"; matchId: string; acceptBy: string;
      /** Seconds left to answer when sent. */
      acceptInSeconds?: ProposedDoc["acceptInSeconds"];
      /** The teams, as player ids (on the socket; REST's proposal leaves them out). */
      teams?: ProposedDoc["teams"];
      /** The tickets that accepted so far (REST). */
      accepted?: string[];
      /** What every player agreed on under the mode's rules, by attribute; absent without rules. */
      attributes?: ProposedDoc["attributes"];
    } & Record<string, unknown>
  | {
      type: "requeued";
      /** The proposal or match that ended (older servers leave it out). */
      matchId?: Doc<"requeued">["matchId"];
    }
  | { type: "matched"; match: PlayerMatch & Record<string, unknown> }
  | { type: "assigned"; connection: string; data?: Record<string, unknown> }
  | { type: "assignment_timeout" }
  | { type: "failed"; code: string; message: string }
  | { type: "cancelled" }
  | { type: "expired"; reason?: Doc<"expired">["reason"] }
  | { type: "unknown"; raw: unknown };

/** Every message type the OpenAPI document names is one of ours (a compile-time check). */
type DocumentTypes = components["schemas"]["SearchMessage"]["type"];
const _covered: Exclude<DocumentTypes, SearchMessage["type"]> extends never ? true : never = true;
void _covered;

/** The fields the server sends typed as the document types them, neither looser nor stricter (a compile-time check). */
type Ours<T extends SearchMessage["type"]> = Extract<SearchMessage, { type: T }>;
type Doc<T extends DocumentTypes> = Extract<Schemas["SearchMessage"], { type: T }>;
type Same<A, B> = [Exclude<A, undefined>] extends [Exclude<B, undefined>] ? ([Exclude<B, undefined>] extends [Exclude<A, undefined>] ? true : never) : never;
const _typed: [
  Same<Ours<"status">["roleWaits"], Doc<"status">["roleWaits"]>,
  Same<Ours<"proposed">["acceptInSeconds"], Doc<"proposed">["acceptInSeconds"]>,
  Same<Ours<"proposed">["teams"], Doc<"proposed">["teams"]>,
  Same<Ours<"proposed">["attributes"], Doc<"proposed">["attributes"]>,
  Same<Ours<"matched">["match"], Doc<"matched">["match"]>,
] = [true, true, true, true, true];
void _typed;

const required: Record<string, string[]> = {
  searching: ["ticketId", "gameMode", "queuedAt"],
  status: [],
  proposed: ["matchId", "acceptBy"],
  requeued: [],
  matched: ["match"],
  assigned: ["connection"],
  assignment_timeout: [],
  failed: ["code"],
  cancelled: [],
  expired: [],
};

/** The message a JSON text (or value) stands for. */
export function parseMessage(input: string | unknown): SearchMessage {
  let value: unknown = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch {
      return { type: "unknown", raw: input };
    }
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    const fields = typeof v.type === "string" ? required[v.type] : undefined;
    if (fields && fields.every((f) => v[f] !== undefined && v[f] !== null)) {
      return v as SearchMessage;
    }
  }
  return { type: "unknown", raw: value };
}

/** Whether nothing follows this message (`matched` is final unless the mode waits for an assignment). */
export function endsSearch(message: SearchMessage): boolean {
  return ["assigned", "failed", "cancelled", "expired"].includes(message.type);
}
