import type { components } from "./generated/openapi.js";
import { errorOf } from "./problem.js";
import { bounded, REQUEST_TIMEOUT_MS } from "./timeout.js";

type Schemas = components["schemas"];
/** A game mode's config, as sent. */
export type GameMode = Schemas["GameMode"];
/** A game mode as answered (defaults filled in, `version`, the secret on create). */
export type GameModeResponse = Schemas["GameModeResponse"];
/** One stored version of a mode's config. */
export type GameModeVersion = Schemas["GameModeVersionView"];
/** A mode's figures (`GET …/stats`). */
export type ModeStats = Schemas["ModeStats"];
/** A mode's waiting searches by reason (`GET …/pool`). */
export type PoolView = Schemas["PoolView"];
/** The project's webhook endpoint as answered. */
export type ProjectWebhook = Schemas["ProjectWebhookView"];
/** Body of `PUT …/webhook`: `url`, `enabled`, `eventTypes`. */
export type PutProjectWebhook = Schemas["PutProjectWebhook"];

/** A mode as answered, edited, is a body `putGameMode` takes (docs/game-modes.md: GET, edit, PUT; a compile-time check). */
const _editable = (answered: GameModeResponse): GameMode => answered;
void _editable;
/** Body of `POST …/tickets`. */
export type CreateTicket = Schemas["CreateTicket"];
/** A ticket's `attributes`: `mmr`, `latencies`, `data` (any object) and the mode's declared attributes. */
export type TicketAttributes = Schemas["Attributes"];
/** A generated ticket; hand `token` to the game client (shown once). */
export type CreatedTicket = Schemas["CreatedTicket"];
/** Where a ticket stands (fields a newer server adds are kept). */
export type TicketStatus = Omit<Schemas["TicketStatus"], "match"> & {
  /** The whole match, once matched and stored (the studio's view; the game client's is `PlayerMatch`). */
  match?: Schemas["MatchRecord"] | null;
} & Record<string, unknown>;

/** The studio reads the whole match's teams off a ticket's status (a compile-time check). */
const _wholeMatch = (status: TicketStatus) => status.match?.teams[0]?.players;
void _wholeMatch;
/** A stored match. */
export type MatchView = Schemas["MatchView"];
/** A page of matches. */
export type MatchesPage = Schemas["MatchesPage"];
/** Body of `POST …/results`. */
export type ResultReport = Schemas["ResultReportSchema"];
/** The ratings a result changed. */
export type ResultApplied = Schemas["ResultApplied"];
/** The `match.made` webhook body. */
export type MatchMadeEvent = Schemas["MatchMadeEvent"];
/** What `endPartySearches` ended: `partyId`, `gameMode` and the `cancelled` ticket ids. */
export type EndedPartySearches = Schemas["EndedPartySearches"];
/** Body of `POST …/matches/{matchId}/assignment`: `connection`, the match's `data`, each player's own. */
export type Assignment = Schemas["AssignmentBody"];
/** A webhook delivery with its attempts. */
export type DeliveryView = Schemas["DeliveryView"];
/** A match's current players (and declared attributes), for a backfill. */
export type Roster = Schemas["Roster"];
/** A backfill request: its open seats, fills and status. */
export type BackfillView = Schemas["BackfillView"];
/** The project's settings (`playerSearchScope`). */
export type ProjectSettings = Schemas["SettingsView"];
/** Body of `PATCH …/settings`. */
export type UpdateSettings = Schemas["UpdateSettings"];
/** A mode's matching hold: `since` and `by`. */
export type ModeHold = Schemas["ModeHold"];
/** What a webhook test's one attempt got back. */
export type TestAttempt = Schemas["TestAttemptView"];

/** Options of {@link BackendClient}. */
export interface BackendOptions {
  /** The server, e.g. `https://mm.example.com`. */
  baseUrl: string;
  /** `prj_…`. */
  projectId: string;
  /** The project's API key, `mp_sk_…` (a secret: keep it on the backend). */
  apiKey: string;
  /** A `fetch` of your own (default: the global one). */
  fetch?: typeof fetch;
  /** Milliseconds one call may take, its answer read included, before it rejects with a `TimeoutError` (default 15 000; 0: none). */
  requestTimeoutMs?: number;
}

const seg = encodeURIComponent;

/** The studio backend's REST client of one project. Every call throws `ProblemError` on a problem answer. */
export class BackendClient {
  private readonly base: string;
  private readonly key: string;
  private readonly fetcher: typeof fetch;

  constructor(options: BackendOptions) {
    this.base = `${options.baseUrl.replace(/\/+$/, "")}/v1/projects/${seg(options.projectId)}/`;
    this.key = options.apiKey;
    this.fetcher = bounded(options.fetch ?? globalThis.fetch.bind(globalThis), options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS);
  }

  /** Any route of the project; `path` is relative to `/v1/projects/{projectId}/`. */
  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${this.key}`, ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    const response = await this.fetcher(this.base + path, init);
    if (!response.ok) throw await errorOf(response);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Creates or replaces a mode (config as code). On create `webhook.secret` is shown in full, once. */
  putGameMode(name: string, mode: GameMode): Promise<GameModeResponse> {
    return this.request("PUT", `game-modes/${seg(name)}`, mode);
  }
  /** One mode. */
  gameMode(name: string): Promise<GameModeResponse> {
    return this.request("GET", `game-modes/${seg(name)}`);
  }
  /** Every mode of the project. */
  gameModes(): Promise<GameModeResponse[]> {
    return this.request("GET", "game-modes");
  }
  /** Deletes a mode. */
  async deleteGameMode(name: string): Promise<void> {
    await this.request("DELETE", `game-modes/${seg(name)}`);
  }
  /** A new webhook secret (the answer's `webhook.secret`, in full); the old one keeps signing for 24 hours. */
  rotateWebhookSecret(name: string): Promise<GameModeResponse> {
    return this.request("POST", `game-modes/${seg(name)}/webhook/rotate-secret`);
  }
  /** A ticket for one player; `idempotencyKey` makes a retried create safe. */
  createTicket(ticket: CreateTicket, idempotencyKey?: string): Promise<CreatedTicket> {
    const headers: Record<string, string> = idempotencyKey ? { "idempotency-key": idempotencyKey } : {};
    return this.request("POST", "tickets", ticket, headers);
  }
  /** The studio's view of a ticket. */
  ticket(ticketId: string): Promise<TicketStatus> {
    return this.request("GET", `tickets/${seg(ticketId)}`);
  }
  /**
   * Cancels a ticket's search (its client gets `cancelled`). A ticket that never searched is revoked:
   * the answer reads `cancelled` and its token can no longer search.
   */
  cancelTicket(ticketId: string): Promise<TicketStatus> {
    return this.request("DELETE", `tickets/${seg(ticketId)}`);
  }
  /** Answers a proposal for a player (modes with acceptance). */
  answerFor(ticketId: string, accept: boolean): Promise<TicketStatus> {
    return this.request("POST", `tickets/${seg(ticketId)}/${accept ? "accept" : "decline"}`);
  }
  /** Ends all of a player's searches. */
  endPlayerSearches(playerId: string): Promise<Schemas["EndedSearches"]> {
    return this.request("DELETE", `players/${seg(playerId)}/searches`);
  }
  /**
   * Erases a player's data from the project (a deletion request): cancels their searches, deletes
   * their ratings, seated tickets and recorded events, and redacts them in stored matches and
   * webhook deliveries. Needs an `admin` key; repeating it answers every count `0`.
   */
  erasePlayer(playerId: string): Promise<Schemas["ErasedPlayer"]> {
    return this.request("DELETE", `players/${seg(playerId)}`);
  }
  /**
   * Ends every live search of a party in one game mode (e.g. a member left the party in the
   * game): each member's client gets `cancelled`. A search already proposed or matched is left
   * alone; a party with no live search answers an empty `cancelled`. Throws `GAME_MODE_NOT_FOUND`
   * for an unknown mode.
   */
  endPartySearches(partyId: string, gameMode: string): Promise<EndedPartySearches> {
    return this.request("DELETE", `parties/${seg(partyId)}/searches?${new URLSearchParams({ gameMode })}`);
  }
  /** A stored match. */
  getMatch(matchId: string): Promise<MatchView> {
    return this.request("GET", `matches/${seg(matchId)}`);
  }
  /** A page of matches, newest first. */
  matches(query: { gameMode?: string; limit?: number; cursor?: string } = {}): Promise<MatchesPage> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    return this.request("GET", `matches?${q}`);
  }
  /** Reports a result (ratings modes). */
  reportResult(gameMode: string, result: ResultReport): Promise<ResultApplied> {
    return this.request("POST", `game-modes/${seg(gameMode)}/results`, result);
  }
  /** Tells a match's players where to play (modes with `assignment`); answers the match. */
  assign(matchId: string, assignment: Assignment): Promise<MatchView> {
    return this.request("POST", `matches/${seg(matchId)}/assignment`, assignment);
  }
  /** Gives a made match back (no free server): its players may search again; answers the match. */
  release(matchId: string): Promise<MatchView> {
    return this.request("POST", `matches/${seg(matchId)}/release`);
  }
  /** The webhook deliveries of a match, with their attempts. */
  deliveries(matchId: string): Promise<DeliveryView[]> {
    return this.request("GET", `matches/${seg(matchId)}/deliveries`);
  }
  /** Sends a match's webhooks again (answers the deliveries queued). */
  redeliver(matchId: string): Promise<DeliveryView[]> {
    return this.request("POST", `matches/${seg(matchId)}/deliveries/redeliver`);
  }
  /** A mode's newest webhook deliveries (webhook tests included). */
  gameModeDeliveries(name: string, query: { eventType?: string; limit?: number } = {}): Promise<DeliveryView[]> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    return this.request("GET", `game-modes/${seg(name)}/deliveries${q.size ? `?${q}` : ""}`);
  }
  /** Sends a signed test event to a mode's webhook once and says what came back. */
  testWebhook(name: string): Promise<TestAttempt> {
    return this.request("POST", `game-modes/${seg(name)}/webhook/test`);
  }
  /** Holds a mode's matching (searches keep waiting, nothing is matched) until `releaseHold`. */
  holdGameMode(name: string): Promise<ModeHold> {
    return this.request("POST", `game-modes/${seg(name)}/hold`);
  }
  /** Lets a held mode match again. */
  async releaseHold(name: string): Promise<void> {
    await this.request("DELETE", `game-modes/${seg(name)}/hold`);
  }
  /**
   * Opens a backfill for a running match that lost players (modes with `backfill.enabled`), with
   * its current roster; throws `BACKFILL_ALREADY_OPEN` (`backfillId` names the open one).
   */
  openBackfill(matchId: string, roster: Roster): Promise<BackfillView> {
    return this.request("POST", `matches/${seg(matchId)}/backfill`, roster);
  }
  /** A match's backfills. */
  backfills(matchId: string): Promise<BackfillView[]> {
    return this.request("GET", `matches/${seg(matchId)}/backfill`);
  }
  /** One backfill. */
  backfill(matchId: string, backfillId: string): Promise<BackfillView> {
    return this.request("GET", `matches/${seg(matchId)}/backfill/${seg(backfillId)}`);
  }
  /** Replaces an open backfill's roster (a player left or joined meanwhile). */
  replaceBackfillRoster(matchId: string, backfillId: string, roster: Roster): Promise<BackfillView> {
    return this.request("PUT", `matches/${seg(matchId)}/backfill/${seg(backfillId)}`, roster);
  }
  /** Closes a backfill (its open seats are no longer filled). */
  closeBackfill(matchId: string, backfillId: string): Promise<BackfillView> {
    return this.request("DELETE", `matches/${seg(matchId)}/backfill/${seg(backfillId)}`);
  }
  /** The project's settings. */
  projectSettings(): Promise<ProjectSettings> {
    return this.request("GET", "settings");
  }
  /** Changes the project's settings (e.g. `{ playerSearchScope: "project" }`). */
  updateProjectSettings(settings: UpdateSettings): Promise<ProjectSettings> {
    return this.request("PATCH", "settings", settings);
  }
  /** Creates a mode (`409` if the name is taken; `putGameMode` creates or replaces). */
  createGameMode(mode: GameMode): Promise<GameModeResponse> {
    return this.request("POST", "game-modes", mode);
  }
  /** Every stored version of a mode's config, oldest first. */
  gameModeVersions(name: string): Promise<GameModeVersion[]> {
    return this.request("GET", `game-modes/${seg(name)}/versions`);
  }
  /** A mode's figures: searching now, waits, the last cycle, its hold, what each rule turned away. */
  gameModeStats(name: string): Promise<ModeStats> {
    return this.request("GET", `game-modes/${seg(name)}/stats`);
  }
  /** A mode's waiting searches counted by why they wait (`waitingByRule`, `waitingByRole`, …). */
  gameModePool(name: string): Promise<PoolView> {
    return this.request("GET", `game-modes/${seg(name)}/pool`);
  }
  /** The project's one webhook endpoint (`404` when it has none). */
  projectWebhook(): Promise<ProjectWebhook> {
    return this.request("GET", "webhook");
  }
  /** Sets the project's webhook endpoint; on create its `secret` is shown in full, once. */
  putProjectWebhook(webhook: PutProjectWebhook): Promise<ProjectWebhook> {
    return this.request("PUT", "webhook", webhook);
  }
  /** Removes the project's webhook endpoint and its secrets. */
  async deleteProjectWebhook(): Promise<void> {
    await this.request("DELETE", "webhook");
  }
  /** A new secret for the project's endpoint (shown in full); the old one keeps signing for 24 hours. */
  rotateProjectWebhookSecret(): Promise<ProjectWebhook> {
    return this.request("POST", "webhook/rotate-secret");
  }
}
