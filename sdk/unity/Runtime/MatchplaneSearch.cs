// The game client's search: the WebSocket GET /v1/search?ticket=<token>, or
// REST polling when the socket cannot be opened. Messages are queued; the
// game drains them on its main thread (TryDequeue in Update).
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Net.Http;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Matchplane.Client
{
    /// <summary>How a search reaches the server.</summary>
    public enum SearchTransport
    {
        /// <summary>The WebSocket, and REST polling when it cannot be opened.</summary>
        Auto,
        /// <summary>The WebSocket only.</summary>
        WebSocket,
        /// <summary>REST polling only.</summary>
        Rest,
    }

    /// <summary>Options of <see cref="MatchplaneSearch.Start"/>.</summary>
    public sealed class SearchOptions
    {
        /// <summary>The transport (Auto by default).</summary>
        public SearchTransport Transport = SearchTransport.Auto;
        /// <summary>Seconds between REST polls: default 2, kept within 0.5..20 (the server ends a search not polled for 30 s).</summary>
        public double PollIntervalSeconds = 2;
        /// <summary>
        /// Seconds the WebSocket may take to open (default 15): a server that takes the connection and
        /// never answers fails the start (Auto then goes on over REST) instead of holding it for good.
        /// </summary>
        public double OpenTimeoutSeconds = 15;
        /// <summary>
        /// Seconds the open WebSocket may stay silent before the search counts as cut (default 15;
        /// 0: never): the package sends a {"type":"ping"} text every quarter of it (at least a second
        /// apart), and once the server answered one with {"type":"pong"}, a socket that then brings
        /// no message for this long queues an `error` (TRANSPORT, CloseCode 1006) and is closed.
        /// .NET's ClientWebSocket hides the server's own pings, and a path that dies without a Close
        /// would otherwise leave the search waiting until TCP gives up, many minutes later.
        /// </summary>
        public double SilenceTimeoutSeconds = 15;
    }

    /// <summary>One running search. Drain <see cref="TryDequeue"/> on the main thread.</summary>
    public sealed partial class MatchplaneSearch : IDisposable
    {
        /// <summary>The API version this package speaks (info.version of the OpenAPI document).</summary>
        public const string ApiVersion = "0.1.0";
        /// <summary>Seconds a REST search may go unpolled before the server ends it.</summary>
        public const double RestPollLimitSeconds = 30;

        /// <summary>Seconds one REST call (a poll, an answer, a cancel) may take before it fails.</summary>
        public const double RequestTimeoutSeconds = 15;

        static readonly HttpClient Http = new HttpClient { Timeout = TimeSpan.FromSeconds(RequestTimeoutSeconds) };
        readonly ConcurrentQueue<SearchMessage> queue = new ConcurrentQueue<SearchMessage>();
        readonly SemaphoreSlim sending = new SemaphoreSlim(1, 1);
        readonly CancellationTokenSource stop = new CancellationTokenSource();
        readonly string baseUrl;
        readonly string token;
        ClientWebSocket socket;
        volatile string ticketId;
        // The matchId of the last `proposed`, until a `requeued` or final message: the proposal an
        // answer names (docs/acceptance.md, "Naming the proposal").
        volatile string proposal;
        volatile bool over;
        /// <summary>Whether the search's outcome came (a final message, or matched): a close before it is an error.</summary>
        volatile bool outcome;
        /// <summary>When the socket last brought a message (Environment.TickCount64 is not in C# 7.2's runtime: ticks of a Stopwatch).</summary>
        long lastHeard;
        /// <summary>Whether the server answered a ping, so that its silence means a cut socket.</summary>
        volatile bool pongs;
        readonly System.Diagnostics.Stopwatch clock = System.Diagnostics.Stopwatch.StartNew();

        /// <summary>The transport in use (WebSocket or Rest).</summary>
        public SearchTransport Transport { get; private set; }
        /// <summary>`tkt_…`, once known (after `searching` on the socket; at once over REST).</summary>
        public string TicketId { get { return ticketId; } }
        /// <summary>Whether the final message has been queued (the queue may still hold messages).</summary>
        public bool IsOver { get { return over; } }

        MatchplaneSearch(string baseUrl, string token)
        {
            this.baseUrl = baseUrl.TrimEnd('/');
            this.token = token;
        }

        /// <summary>
        /// Starts a search with a ticket's token. Throws <see cref="ProblemException"/> when the
        /// server refuses it (TICKET_INVALID, SEARCH_ALREADY_ACTIVE, PLAYER_ALREADY_SEARCHING,
        /// PLAYER_IN_MATCH with <see cref="ProblemException.MatchId"/>, …).
        /// </summary>
        public static async Task<MatchplaneSearch> Start(string baseUrl, string token, SearchOptions options = null)
        {
            options = options ?? new SearchOptions();
            var search = new MatchplaneSearch(baseUrl, token);
            if (options.Transport != SearchTransport.Rest)
            {
                try
                {
                    await search.OpenSocket(TimeSpan.FromSeconds(options.OpenTimeoutSeconds)).ConfigureAwait(false);
                    if (options.SilenceTimeoutSeconds > 0)
                        _ = Task.Run(() => search.Heartbeat(TimeSpan.FromSeconds(options.SilenceTimeoutSeconds)));
                    return search;
                }
                catch (Exception) when (options.Transport == SearchTransport.Auto)
                {
                    // A proxy refusing the upgrade, or the server refusing the token: REST
                    // says which, with the problem.
                }
            }
            double interval = Math.Min(20, Math.Max(0.5, options.PollIntervalSeconds));
            await search.StartRest(TimeSpan.FromSeconds(interval)).ConfigureAwait(false);
            return search;
        }

        /// <summary>Takes the next message, if any (call it from the main thread, e.g. every Update).</summary>
        public bool TryDequeue(out SearchMessage message)
        {
            return queue.TryDequeue(out message);
        }

        void Push(SearchMessage message)
        {
            if (over) return;
            if (message.Type == "searching" && message.TicketId != null) ticketId = message.TicketId;
            if (message.Type == "proposed") proposal = message.MatchId;
            else if (message.Type == "requeued" || message.Type == "matched" || message.Type == "assignment_timeout" || message.EndsSearch) proposal = null;
            queue.Enqueue(message);
            if (message.Type == "matched" || message.EndsSearch) outcome = true;
            if (message.EndsSearch) over = true;
        }

        void Fail(Exception error)
        {
            var problem = error as ProblemException;
            Push(new SearchMessage
            {
                Type = "error",
                Code = problem != null ? problem.Code : "TRANSPORT",
                Message = error.Message,
            });
        }

        async Task OpenSocket(TimeSpan within)
        {
            var ws = new ClientWebSocket();
            var url = (baseUrl.StartsWith("https") ? "wss" : "ws") + baseUrl.Substring(baseUrl.IndexOf(':'))
                + "/v1/search?ticket=" + Uri.EscapeDataString(token);
            // Raced against the limit rather than cancelled by it: Mono's ConnectAsync does not
            // stop waiting for the upgrade's answer when its token is cancelled.
            var connect = ws.ConnectAsync(new Uri(url), stop.Token);
            if (await Task.WhenAny(connect, Task.Delay(within)).ConfigureAwait(false) != connect)
            {
                ws.Abort();
                ws.Dispose();
                _ = connect.ContinueWith(t => t.Exception, TaskContinuationOptions.OnlyOnFaulted);
                throw new TimeoutException("the WebSocket did not open within " + within.TotalSeconds + " s");
            }
            await connect.ConfigureAwait(false);
            socket = ws;
            Transport = SearchTransport.WebSocket;
            _ = Task.Run(ReceiveLoop);
        }

        async Task ReceiveLoop()
        {
            var buffer = new byte[8192];
            var text = new StringBuilder();
            try
            {
                while (socket.State == WebSocketState.Open)
                {
                    var result = await socket.ReceiveAsync(new ArraySegment<byte>(buffer), stop.Token).ConfigureAwait(false);
                    if (result.MessageType == WebSocketMessageType.Close)
                    {
                        // The server closes only after the outcome; before it, the game must act
                        // (1001: the server is stopping, search again with the same ticket).
                        int code = result.CloseStatus.HasValue ? (int)result.CloseStatus.Value : 1005;
                        if (!outcome && !stop.IsCancellationRequested)
                        {
                            Push(new SearchMessage
                            {
                                Type = "error",
                                Code = "TRANSPORT",
                                Message = "the search's WebSocket closed with " + code + " before the search's outcome",
                                CloseCode = code,
                                SearchAgain = code == 1001,
                            });
                        }
                        await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "", CancellationToken.None).ConfigureAwait(false);
                        break;
                    }
                    text.Append(Encoding.UTF8.GetString(buffer, 0, result.Count));
                    if (!result.EndOfMessage) continue;
                    Interlocked.Exchange(ref lastHeard, clock.ElapsedMilliseconds);
                    var message = SearchMessage.Parse(text.ToString());
                    text.Clear();
                    // The answer to the package's own ping: the server is there (never queued).
                    if (message.Type == "pong") { pongs = true; continue; }
                    Push(message);
                }
            }
            catch (Exception error)
            {
                if (!stop.IsCancellationRequested && !over) Fail(error);
            }
            over = true;
        }

        /// <summary>
        /// Sends {"type":"ping"} every quarter of <paramref name="silence"/> (at least a second apart)
        /// while the socket is open; once a pong came, a socket silent for <paramref name="silence"/>
        /// is cut: an `error` (TRANSPORT, CloseCode 1006) is queued and the socket aborted. A server
        /// that never answers a ping is never taken for silent.
        /// </summary>
        async Task Heartbeat(TimeSpan silence)
        {
            var every = TimeSpan.FromMilliseconds(Math.Max(1000, silence.TotalMilliseconds / 4));
            Interlocked.Exchange(ref lastHeard, clock.ElapsedMilliseconds);
            try
            {
                while (!stop.IsCancellationRequested && !over && socket.State == WebSocketState.Open)
                {
                    long quiet = clock.ElapsedMilliseconds - Interlocked.Read(ref lastHeard);
                    if (pongs && quiet >= silence.TotalMilliseconds)
                    {
                        if (!outcome)
                        {
                            Push(new SearchMessage
                            {
                                Type = "error",
                                Code = "TRANSPORT",
                                Message = "no word from the server for " + silence.TotalSeconds + " s: the search's WebSocket is cut",
                                CloseCode = 1006,
                            });
                        }
                        over = true;
                        socket.Abort();
                        return;
                    }
                    await SendText("{\"type\":\"ping\"}").ConfigureAwait(false);
                    await Task.Delay(every, stop.Token).ConfigureAwait(false);
                }
            }
            catch (Exception)
            {
                // The socket closed or the search was disposed: the receive loop says why.
            }
        }

        async Task SendText(string json)
        {
            await sending.WaitAsync().ConfigureAwait(false);
            try
            {
                var bytes = Encoding.UTF8.GetBytes(json);
                await socket.SendAsync(new ArraySegment<byte>(bytes), WebSocketMessageType.Text, true, stop.Token).ConfigureAwait(false);
            }
            finally
            {
                sending.Release();
            }
        }

        /// <summary>Accepts the open proposal, naming it ({"type":"accept","matchId":…} on the socket, POST …/accept?matchId=… over REST).</summary>
        public Task Accept() { return Answer("accept"); }

        /// <summary>Declines the open proposal (the player is cooled down in this mode).</summary>
        public Task Decline() { return Answer("decline"); }

        async Task Answer(string verb)
        {
            // Named, an answer meant for a proposal that closed meanwhile never counts in the next.
            var named = proposal;
            if (Transport == SearchTransport.Rest)
            {
                var query = named == null ? "" : "?matchId=" + Uri.EscapeDataString(named);
                await TicketCall(HttpMethod.Post, "/" + verb + query).ConfigureAwait(false);
                PollNow();
            }
            else
            {
                var name = named == null ? "" : ",\"matchId\":" + Json.Quote(named);
                await SendText("{\"type\":" + Json.Quote(verb) + name + "}").ConfigureAwait(false);
            }
        }

        /// <summary>
        /// Cancels: DELETE /v1/searches/{ticketId} once the id is known (the server's `cancelled`
        /// follows), else closes the socket, which the server takes as a cancel, and queues `cancelled`.
        /// Throws <see cref="ProblemException"/> TICKET_ALREADY_MATCHED when the match came first.
        /// </summary>
        public async Task Cancel()
        {
            if (ticketId != null)
            {
                await TicketCall(HttpMethod.Delete, "").ConfigureAwait(false);
                PollNow();
                return;
            }
            if (socket != null)
                await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "cancel", CancellationToken.None).ConfigureAwait(false);
            Push(new SearchMessage { Type = "cancelled", IsKnown = true });
        }

        async Task<Dictionary<string, object>> TicketCall(HttpMethod method, string suffix)
        {
            var request = new HttpRequestMessage(method, baseUrl + "/v1/searches/" + Uri.EscapeDataString(ticketId ?? "") + suffix);
            request.Headers.TryAddWithoutValidation("Authorization", "Ticket " + token);
            using (var response = await Http.SendAsync(request).ConfigureAwait(false))
            {
                var body = await response.Content.ReadAsStringAsync().ConfigureAwait(false);
                if (!response.IsSuccessStatusCode) throw Problem(response, body);
                return Json.TryParse(body) as Dictionary<string, object>;
            }
        }

        static ProblemException Problem(HttpResponseMessage response, string body)
        {
            string retry = null;
            IEnumerable<string> values;
            if (response.Headers.TryGetValues("Retry-After", out values)) retry = string.Join("", values);
            return ProblemException.From((int)response.StatusCode, body, retry);
        }

        /// <summary>Stops listening: closes the socket (which ends the search) or stops polling.</summary>
        public void Dispose()
        {
            over = true;
            var ws = socket;
            if (ws != null && ws.State == WebSocketState.Open)
            {
                try { ws.CloseAsync(WebSocketCloseStatus.NormalClosure, "", CancellationToken.None).Wait(1000); }
                catch (Exception) { }
            }
            stop.Cancel();
        }
    }
}
