// One message of a search, as the socket sends it or as REST polling derives it.
using System.Collections.Generic;

namespace Matchplane.Client
{
    /// <summary>
    /// One message of a search. <see cref="Type"/> is the protocol's `type`:
    /// searching, status, proposed, requeued, matched, assigned,
    /// assignment_timeout, failed, cancelled, expired; a message this version
    /// does not know keeps its type with <see cref="IsKnown"/> false (never an
    /// error), and "error" is this SDK's own: the connection failed
    /// (<see cref="Code"/>: the server's problem code, or TRANSPORT).
    /// </summary>
    public sealed class SearchMessage
    {
        static readonly string[] Known = {
            "searching", "status", "proposed", "requeued", "matched", "assigned",
            "assignment_timeout", "failed", "cancelled", "expired",
        };

        /// <summary>The protocol's `type`.</summary>
        public string Type;
        /// <summary>Whether this SDK knows the type.</summary>
        public bool IsKnown;
        /// <summary>`tkt_…` (searching).</summary>
        public string TicketId;
        /// <summary>The game mode (searching).</summary>
        public string GameMode;
        /// <summary>When the search started, RFC 3339 (searching).</summary>
        public string QueuedAt;
        /// <summary>Seconds waited (status).</summary>
        public double WaitSeconds;
        /// <summary>Median round trip in ms, once measured (status).</summary>
        public double? PingMs;
        /// <summary>
        /// `waitingReason.code` of the last cycle (status). The reason's other fields are in
        /// `Raw["waitingReason"]`, e.g. `missing` (the members not searching yet) with PARTY_INCOMPLETE.
        /// </summary>
        public string WaitingReason;
        /// <summary>Seats the last cycle found around the player, when sent (status).</summary>
        public int? Found;
        /// <summary>Seats the smallest allowed match needs now, when sent (status).</summary>
        public int? Needed;
        /// <summary>`mat_…` (proposed, matched; requeued: the proposal or match that ended, when the server says it).</summary>
        public string MatchId;
        /// <summary>Answer before this instant, RFC 3339 (proposed).</summary>
        public string AcceptBy;
        /// <summary>The game server's address (assigned).</summary>
        public string Connection;
        /// <summary>
        /// The error code (failed, error): e.g. MATCH_DECLINED, or PARTY_INCOMPLETE when the
        /// player's party stayed incomplete (a member never searched) for the mode's
        /// `parties.incompleteTimeoutSeconds`.
        /// </summary>
        public string Code;
        /// <summary>
        /// A human-readable explanation (failed, error); with PARTY_INCOMPLETE it ends in
        /// "missing: " and the ids of the members who did not search, comma-separated.
        /// </summary>
        public string Message;
        /// <summary>Why it expired: TICKET_TTL, REST_POLL_LAPSED, PONG_TIMEOUT (expired).</summary>
        public string Reason;
        /// <summary>
        /// The WebSocket close code when the socket closed before the search's outcome (error,
        /// with Code TRANSPORT): 1001 when the server is stopping, 1000 when a proxy closed it.
        /// </summary>
        public int? CloseCode;
        /// <summary>
        /// Whether to search again at once with the same ticket (error): the server is stopping
        /// (a rolling restart) and ended the search cancelled.
        /// </summary>
        public bool SearchAgain;
        /// <summary>The whole message as parsed JSON (match, teams, data, …).</summary>
        public Dictionary<string, object> Raw = new Dictionary<string, object>();

        /// <summary>Whether nothing follows (assigned, failed, cancelled, expired, error).</summary>
        public bool EndsSearch
        {
            get { return Type == "assigned" || Type == "failed" || Type == "cancelled" || Type == "expired" || Type == "error"; }
        }

        /// <summary>The message a JSON text stands for.</summary>
        public static SearchMessage Parse(string text)
        {
            var map = Json.TryParse(text) as Dictionary<string, object>;
            if (map == null) return new SearchMessage { Type = "unknown", Raw = new Dictionary<string, object> { { "text", text } } };
            return FromMap(map);
        }

        /// <summary>The message a parsed JSON object stands for.</summary>
        public static SearchMessage FromMap(Dictionary<string, object> map)
        {
            var m = new SearchMessage { Raw = map, Type = Str(map, "type") ?? "unknown" };
            m.IsKnown = System.Array.IndexOf(Known, m.Type) >= 0;
            m.TicketId = Str(map, "ticketId");
            m.GameMode = Str(map, "gameMode");
            m.QueuedAt = Str(map, "queuedAt");
            m.WaitSeconds = Num(map, "waitSeconds") ?? 0;
            m.PingMs = Num(map, "pingMs");
            var reason = Get(map, "waitingReason") as Dictionary<string, object>;
            if (reason != null) m.WaitingReason = Str(reason, "code");
            var found = Num(map, "found");
            if (found.HasValue) m.Found = (int)found.Value;
            var needed = Num(map, "needed");
            if (needed.HasValue) m.Needed = (int)needed.Value;
            m.MatchId = Str(map, "matchId");
            var match = Get(map, "match") as Dictionary<string, object>;
            if (match != null) m.MatchId = Str(match, "matchId");
            m.AcceptBy = Str(map, "acceptBy");
            m.Connection = Str(map, "connection");
            m.Code = Str(map, "code");
            m.Message = Str(map, "message");
            m.Reason = Str(map, "reason");
            return m;
        }

        internal static object Get(Dictionary<string, object> map, string key)
        {
            object v;
            return map != null && map.TryGetValue(key, out v) ? v : null;
        }

        internal static string Str(Dictionary<string, object> map, string key)
        {
            return Get(map, key) as string;
        }

        internal static double? Num(Dictionary<string, object> map, string key)
        {
            var v = Get(map, key);
            return v is double ? (double?)(double)v : null;
        }
    }
}
