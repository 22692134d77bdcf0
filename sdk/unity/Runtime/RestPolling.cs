// The REST fallback: POST /v1/searches, then GET /v1/searches/{ticketId} every
// poll interval, turning the polled status into the socket's messages. A failed
// poll is retried before the server's 30 s limit runs out.
using System;
using System.Collections.Generic;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Matchplane.Client
{
    public sealed partial class MatchplaneSearch
    {
        TimeSpan interval;
        CancellationTokenSource wake = new CancellationTokenSource();
        bool toldSearching, toldMatched, held;
        string toldStatus = "", toldProposal = "";

        async Task Begin()
        {
            var body = new StringContent("{\"ticket\":" + Json.Quote(token) + "}", Encoding.UTF8, "application/json");
            using (var response = await Http.PostAsync(baseUrl + "/v1/searches", body).ConfigureAwait(false))
            {
                var text = await response.Content.ReadAsStringAsync().ConfigureAwait(false);
                if (!response.IsSuccessStatusCode) throw Problem(response, text);
                ticketId = SearchMessage.Str(Json.TryParse(text) as Dictionary<string, object>, "ticketId");
            }
        }

        async Task StartRest(TimeSpan every)
        {
            interval = every;
            await Begin().ConfigureAwait(false);
            Transport = SearchTransport.Rest;
            _ = Task.Run(PollLoop);
        }

        void PollNow()
        {
            var old = Interlocked.Exchange(ref wake, new CancellationTokenSource());
            old.Cancel();
        }

        async Task PollLoop()
        {
            var lastOk = DateTime.UtcNow;
            var wait = TimeSpan.Zero;
            while (!over && !stop.IsCancellationRequested)
            {
                try { await Task.Delay(wait, wake.Token).ConfigureAwait(false); }
                catch (OperationCanceledException) { }
                if (stop.IsCancellationRequested) return;
                Dictionary<string, object> status;
                try
                {
                    status = await TicketCall(HttpMethod.Get, "").ConfigureAwait(false);
                }
                catch (Exception error)
                {
                    var problem = error as ProblemException;
                    bool retryable = problem == null || problem.Status == 429 || problem.Status >= 500;
                    var left = TimeSpan.FromSeconds(RestPollLimitSeconds - 5) - (DateTime.UtcNow - lastOk);
                    if (!retryable || left <= TimeSpan.Zero) { Fail(error); return; }
                    var asked = problem != null && problem.RetryAfterSeconds.HasValue ? TimeSpan.FromSeconds(problem.RetryAfterSeconds.Value) : interval;
                    wait = asked < left ? asked : left;
                    continue;
                }
                lastOk = DateTime.UtcNow;
                wait = interval;
                bool restart, done;
                foreach (var m in Told(status ?? new Dictionary<string, object>(), out restart, out done)) Push(m);
                if (done) over = true;
                if (restart)
                {
                    try { await Begin().ConfigureAwait(false); } catch (Exception) { }
                }
            }
        }

        static SearchMessage Of(string type, Dictionary<string, object> raw)
        {
            var m = SearchMessage.FromMap(raw);
            m.Type = type;
            m.IsKnown = true;
            return m;
        }

        /// <summary>`searching`, once and first: also when the first poll already reads the search
        /// proposed or matched (a cycle ran between the start and that poll), as the socket always
        /// tells it first.</summary>
        void SearchingOnce(Dictionary<string, object> s, List<SearchMessage> out_)
        {
            if (toldSearching) return;
            toldSearching = true;
            out_.Add(Of("searching", s));
        }

        List<SearchMessage> Told(Dictionary<string, object> s, out bool restart, out bool done)
        {
            var out_ = new List<SearchMessage>();
            restart = false;
            done = false;
            switch (SearchMessage.Str(s, "status"))
            {
                case "searching":
                case "created":
                    if (held) { out_.Add(Of("requeued", new Dictionary<string, object>())); held = false; toldStatus = ""; }
                    SearchingOnce(s, out_);
                    // A status when what it says changes, as on the socket (roleWaits included), and
                    // at each new whole second of the wait: over REST no ping carries a newer wait.
                    string key = Json.Write(SearchMessage.Get(s, "waitingReason")) + Json.Write(SearchMessage.Get(s, "found")) + Json.Write(SearchMessage.Get(s, "needed")) +
                        Json.Write(SearchMessage.Get(s, "roleWaits")) + "|" + Math.Floor(SearchMessage.Num(s, "waitSeconds") ?? 0);
                    if (key != toldStatus) { toldStatus = key; out_.Add(Of("status", s)); }
                    break;
                case "proposed":
                    SearchingOnce(s, out_);
                    var p = SearchMessage.Get(s, "proposal") as Dictionary<string, object>;
                    var id = SearchMessage.Str(p, "matchId");
                    if (id != null && id != toldProposal) { toldProposal = id; held = true; out_.Add(Of("proposed", p)); }
                    break;
                case "matched":
                    SearchingOnce(s, out_);
                    if (!toldMatched) { toldMatched = true; out_.Add(Of("matched", s)); }
                    if (!s.ContainsKey("assignment")) { done = true; break; }
                    var a = SearchMessage.Get(s, "assignment") as Dictionary<string, object>;
                    if (a == null) { held = true; break; }
                    out_.Add(Of("assigned", a));
                    break;
                case "released":
                    // As a socket is told (docs/acceptance.md): assignment_timeout when
                    // `reason` says so (docs/searching.md, "Statuses"), then requeued at
                    // once, as the search starts again (the next cycle may match it
                    // before a poll reads it searching).
                    if (toldMatched)
                    {
                        if (SearchMessage.Str(s, "reason") == "ASSIGNMENT_TIMEOUT")
                            out_.Add(Of("assignment_timeout", new Dictionary<string, object>()));
                        out_.Add(Of("requeued", new Dictionary<string, object>()));
                        toldStatus = "";
                    }
                    held = !toldMatched;
                    toldMatched = false;
                    toldProposal = "";
                    restart = true;
                    break;
                case "cancelled":
                case "expired":
                    out_.Add(Of(SearchMessage.Str(s, "status"), s));
                    break;
                case "failed":
                    var e = SearchMessage.Get(s, "error") as Dictionary<string, object> ?? new Dictionary<string, object>();
                    out_.Add(Of("failed", e));
                    break;
                default:
                    var unknown = SearchMessage.FromMap(s);
                    unknown.Type = SearchMessage.Str(s, "status") ?? "unknown";
                    unknown.IsKnown = false;
                    out_.Add(unknown);
                    break;
            }
            return out_;
        }
    }
}
