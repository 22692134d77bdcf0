import type { components } from "./generated/openapi.js";

/** A waiting reason: `{code, …}` (e.g. `NO_CANDIDATES`). */
export type WaitingReason = { code: string } & Record<string, unknown>;

/**
 * One message of a search: the WebSocket's JSON text messages, and the same
 * events derived from REST polling. A message this SDK does not know arrives
 * as `{type: "unknown", raw}`, never as an error.
 */
export type SearchMessage =
  | { type: "searching"; ticketId: string; gameMode: string; queuedAt: string }
  | { type: "status"; waitSeconds: number; pingMs?: number | null; waitingReason?: WaitingReason | null; found?: number; needed?: number }
  | { type: "proposed"; matchId: string; acceptBy: string; teams?: unknown; accepted?: string[] } & Record<string, unknown>
  | { type: "requeued" }
  | { type: "matched"; match: { matchId: string } & Record<string, unknown> }
  | { type: "assigned"; connection: string; data?: Record<string, unknown> }
  | { type: "assignment_timeout" }
  | { type: "failed"; code: string; message: string }
  | { type: "cancelled" }
  | { type: "expired"; reason?: string }
  | { type: "unknown"; raw: unknown };

/** Every message type the OpenAPI document names is one of ours (a compile-time check). */
type DocumentTypes = components["schemas"]["SearchMessage"]["type"];
const _covered: Exclude<DocumentTypes, SearchMessage["type"]> extends never ? true : never = true;
void _covered;

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
