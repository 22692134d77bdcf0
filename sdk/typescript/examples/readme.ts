// README's code blocks besides the quickstart, each inside a function that
// names what the block takes as given (`backend`, a search `s`, `show`).
// `npm run build` type-checks them, and test/readme.test.mjs checks that
// every ```ts block of README is in an example file, line for line.
import type { BackendClient, CreateTicket, Search } from "@matchplane/client";

/** "Regions and ticket data". */
export async function regionsAndTicketData(backend: BackendClient, s: Search, show: (text: string) => void): Promise<void> {
  // The backend: a ticket with the client's latencies and data for the game server.
  const ticket: CreateTicket = {
    gameMode: "ranked-duel", playerId: "ana",
    attributes: { mmr: 1520, latencies: { "eu-west": 31, "us-east": 110 }, data: { character: "mage" } },
  };
  const { ticketId } = await backend.createTicket(ticket);

  // The game client: where the match is played, and its own data back.
  for await (const m of s) {
    if (m.type === "matched") show(`${m.match.region} as ${String(m.match.player.data?.character)}`);
  }

  // The backend, in a mode with `assignment`: where the player plays, once posted.
  const status = await backend.ticket(ticketId);
  if (status.assignment) show(String(status.assignment.connection));
}

/** "Parties". */
export async function parties(backend: BackendClient, s: Search, show: (text: string) => void): Promise<void> {
  // The backend: a member left the party, so nobody else waits for them.
  const { cancelled } = await backend.endPartySearches("party-7", "squad");

  // The game client: say whom the party waits for, and why it ended.
  for await (const m of s) {
    if (m.type === "status" && m.waitingReason?.code === "PARTY_INCOMPLETE") show(`waiting for ${m.waitingReason.missing}`);
    if (m.type === "failed" && m.code === "PARTY_INCOMPLETE") show(m.message); // "…; missing: ben"
  }
  show(`cancelled ${cancelled.join(", ")}`);
}
