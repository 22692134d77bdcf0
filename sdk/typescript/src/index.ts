/**
 * matchplane's TypeScript SDK (Node 20+ and browsers): the studio backend's
 * REST client, the game client's search, and webhook verification.
 */
export { BackendClient } from "./backend.js";
export type {
  Assignment, BackendOptions, BackfillView, CreateTicket, CreatedTicket, DeliveryView, EndedPartySearches, GameMode,
  GameModeResponse, GameModeVersion, MatchMadeEvent, MatchView, MatchesPage, ModeHold, ModeStats, PoolView, ProjectSettings,
  ProjectWebhook, PutProjectWebhook, ResultApplied, ResultReport, Roster, TestAttempt, TicketAttributes, TicketStatus,
  UpdateSettings,
} from "./backend.js";
export { endsSearch, parseMessage } from "./messages.js";
export type { PlayerMatch, SearchMessage, WaitingReason } from "./messages.js";
export { HttpError, ProblemError } from "./problem.js";
export type { FieldError, ProblemBody } from "./problem.js";
export { REST_POLL_LIMIT_MS, Search, SearchClosedError, search } from "./search.js";
export type { SearchOptions, Transport, WebSocketLike } from "./search.js";
export { verifyWebhook, WebhookVerificationError } from "./webhook.js";
export type { HeaderSource, VerifyOptions } from "./webhook.js";
export type { components, paths, webhooks } from "./generated/openapi.js";

/** The API version this SDK speaks: `info.version` of the OpenAPI document. */
export const API_VERSION = "0.1.0";
