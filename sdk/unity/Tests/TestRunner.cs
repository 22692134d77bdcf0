// The package's tests, run with Mono (sdk/unity/run-tests): a small runner that
// prints one line per test and "N passed, N failed" at the end.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using Matchplane.Client;

static class TestRunner
{
    static Dev dev;

    static void Check(bool ok, string what)
    {
        if (!ok) throw new Exception("check failed: " + what);
    }

    /// <summary>Drains the queue as a game's main thread would, until the search is over.</summary>
    static List<SearchMessage> Drain(MatchplaneSearch s, Action<SearchMessage> each = null, double seconds = 30)
    {
        var seen = new List<SearchMessage>();
        var until = DateTime.UtcNow.AddSeconds(seconds);
        while (DateTime.UtcNow < until)
        {
            SearchMessage m;
            while (s.TryDequeue(out m)) { seen.Add(m); if (each != null) each(m); }
            if (s.IsOver && !s.TryDequeue(out m)) break;
            if (s.IsOver) { seen.Add(m); continue; }
            Thread.Sleep(16);
        }
        return seen;
    }

    static string Kinds(List<SearchMessage> seen) { return string.Join(",", seen.Select(m => m.Type)); }

    static void EveryProtocolMessageParses()
    {
        var texts = new[] {
            "{\"type\":\"searching\",\"ticketId\":\"tkt_1\",\"gameMode\":\"duel\",\"queuedAt\":\"t\"}",
            "{\"type\":\"status\",\"waitSeconds\":1.5,\"pingMs\":null,\"waitingReason\":{\"code\":\"NO_CANDIDATES\"},\"found\":1,\"needed\":2}",
            "{\"type\":\"proposed\",\"matchId\":\"mat_1\",\"acceptBy\":\"t\",\"teams\":[[\"a\"],[\"b\"]]}",
            "{\"type\":\"requeued\"}", "{\"type\":\"matched\",\"match\":{\"matchId\":\"mat_1\"}}",
            "{\"type\":\"assigned\",\"connection\":\"h:1\",\"data\":{}}", "{\"type\":\"assignment_timeout\"}",
            "{\"type\":\"failed\",\"code\":\"MATCH_DECLINED\",\"message\":\"m\"}", "{\"type\":\"cancelled\"}",
            "{\"type\":\"expired\",\"reason\":\"TICKET_TTL\"}",
        };
        foreach (var t in texts) Check(SearchMessage.Parse(t).IsKnown, t);
        var status = SearchMessage.Parse(texts[1]);
        Check(status.WaitingReason == "NO_CANDIDATES" && status.Found == 1 && status.Needed == 2 && status.WaitSeconds == 1.5, "status fields");
        Check(SearchMessage.Parse(texts[4]).MatchId == "mat_1", "matched id");
        var unknown = SearchMessage.Parse("{\"type\":\"backfill_offer\",\"seat\":2}");
        Check(!unknown.IsKnown && unknown.Type == "backfill_offer" && !unknown.EndsSearch, "unknown kept");
        Check(SearchMessage.Parse("not json").Type == "unknown", "not json");
        Check(Json.Write(Json.Parse("{\"a\":[1,true,null,\"x\\\"y\"]}")) == "{\"a\":[1,true,null,\"x\\\"y\"]}", "json round trip");
        Check(MatchplaneSearch.ApiVersion == "0.1.0", "api version");
    }

    /// <summary>PLAYER_IN_MATCH names the match waiting for its assignment; other problems carry none.</summary>
    static void AProblemNamesItsMatch()
    {
        var p = ProblemException.From(409, "{\"type\":\"about:blank\",\"title\":\"Player in match\",\"status\":409," +
            "\"code\":\"PLAYER_IN_MATCH\",\"detail\":\"the player is in match mat_01JE of game mode ranked, which waits for its assignment\"," +
            "\"errors\":[],\"ticketId\":\"tkt_01JE\",\"gameMode\":\"ranked\",\"matchId\":\"mat_01JE\"}", null);
        Check(p.Status == 409 && p.Code == "PLAYER_IN_MATCH" && p.MatchId == "mat_01JE", "PLAYER_IN_MATCH's matchId: " + p.Message);
        Check((string)p.Body["ticketId"] == "tkt_01JE" && (string)p.Body["gameMode"] == "ranked", "the body is kept");
        var other = ProblemException.From(409, "{\"status\":409,\"code\":\"PLAYER_ALREADY_SEARCHING\",\"ticketId\":\"tkt_1\",\"matchId\":null}", null);
        Check(other.MatchId == null, "no match without one");
        Check(ProblemException.From(502, "<html>", null).MatchId == null, "no match in a proxy's answer");
        var failed = SearchMessage.Parse("{\"type\":\"failed\",\"code\":\"PARTY_INCOMPLETE\",\"message\":\"the party stayed incomplete for 5 s; missing: di\"}");
        Check(failed.EndsSearch && failed.Code == "PARTY_INCOMPLETE" && failed.Message.EndsWith("missing: di"), "PARTY_INCOMPLETE failure");
    }

    static void TheApiVersionIsTheDocuments()
    {
        var doc = File.ReadAllText(Path.Combine(Root(), "../../openapi/openapi.json"));
        var info = (Dictionary<string, object>)((Dictionary<string, object>)Json.Parse(doc))["info"];
        Check((string)info["version"] == MatchplaneSearch.ApiVersion, "ApiVersion is openapi info.version");
        Check(File.ReadAllText(Path.Combine(Root(), "package.json")).Contains("\"apiVersion\": \"" + MatchplaneSearch.ApiVersion + "\""), "package.json apiVersion");
    }

    /// <summary>A git URL without the package's folder installs nothing: the repository root has no package.json.</summary>
    static void TheInstallLineNamesThePackageFolder()
    {
        var readme = File.ReadAllText(Path.Combine(Root(), "README.md"));
        Check(readme.Contains(".git?path=sdk/unity"), "README's git URL must end in ?path=sdk/unity");
        Check(File.Exists(Path.Combine(Root(), "../../sdk/unity/package.json")), "sdk/unity is the package's folder");
    }

    static void TwoPlayersMatchOverSocketAndRest()
    {
        dev.Duel("unity-duel");
        var ana = dev.Ticket("unity-duel", "ana");
        var ben = dev.Ticket("unity-duel", "ben");
        var a = MatchplaneSearch.Start(dev.BaseUrl, ana[1]).Result;
        var b = MatchplaneSearch.Start(dev.BaseUrl, ben[1], new SearchOptions { Transport = SearchTransport.Rest, PollIntervalSeconds = 0.5 }).Result;
        Check(a.Transport == SearchTransport.WebSocket && b.Transport == SearchTransport.Rest, "transports");
        Check(b.TicketId == ben[0], "REST knows its ticket id at once");
        var seenB = new List<SearchMessage>();
        var tb = new Thread(() => seenB = Drain(b));
        tb.Start();
        var seenA = Drain(a);
        tb.Join();
        foreach (var seen in new[] { seenA, seenB })
        {
            Check(seen.First().Type == "searching" && seen.Last().Type == "matched", Kinds(seen));
        }
        Check(seenA.Last().MatchId != null && seenA.Last().MatchId == seenB.Last().MatchId, "one match");
        Check(a.TicketId == ana[0], "socket learnt the ticket id");
    }

    static void CancelOnBothTransports()
    {
        dev.Duel("unity-solo");
        var ana = dev.Ticket("unity-solo", "ana");
        var s = MatchplaneSearch.Start(dev.BaseUrl, ana[1]).Result;
        while (s.TicketId == null) Thread.Sleep(16);
        s.Cancel().Wait();
        var seen = Drain(s);
        Check(seen.Last().Type == "cancelled", Kinds(seen));
        var r = MatchplaneSearch.Start(dev.BaseUrl, ana[1], new SearchOptions { Transport = SearchTransport.Rest }).Result;
        r.Cancel().Wait();
        seen = Drain(r);
        Check(seen.Last().Type == "cancelled", Kinds(seen));
        Check((string)dev.Call("GET", "tickets/" + ana[0], null)["status"] == "cancelled", "studio sees cancelled");
    }

    /// <summary>Over REST a lone player's status keeps counting its wait: one per poll that sees a new whole second.</summary>
    static void OverRestTheWaitKeepsCounting()
    {
        dev.Duel("unity-alone");
        var ana = dev.Ticket("unity-alone", "ana");
        var r = MatchplaneSearch.Start(dev.BaseUrl, ana[1], new SearchOptions { Transport = SearchTransport.Rest, PollIntervalSeconds = 0.5 }).Result;
        var waits = Drain(r, null, 5).Where(m => m.Type == "status").Select(m => m.WaitSeconds).ToList();
        r.Cancel().Wait();
        Check(waits.Count >= 4 && waits.Last() >= 3.5, "statuses' waits: " + string.Join(",", waits));
    }

    /// <summary>
    /// A role queue (the server's docs/rules.md, "Role waits"): once two tanks and two damage
    /// players were matched, a tank waiting over REST gets a status whose `Raw["roleWaits"]` has
    /// the tank median (its server reads it at most 10 s late).
    /// </summary>
    static void ARoleQueueStatusCarriesRoleWaitsOverRest()
    {
        dev.Duel("unity-roles", "\"attributes\":{\"roles\":{\"type\":\"stringSet\",\"values\":[\"tank\",\"damage\"]}}," +
            "\"composition\":{\"attribute\":\"roles\",\"perTeam\":{\"tank\":1,\"damage\":1}}", "[2,2]");
        Func<string, string, string> token = (player, role) => (string)dev.Call("POST", "tickets",
            "{\"gameMode\":\"unity-roles\",\"playerId\":\"" + player + "\",\"attributes\":{\"mmr\":1500,\"roles\":[\"" + role + "\"]}}")["token"];
        var four = new[] { token("t1", "tank"), token("t2", "tank"), token("d1", "damage"), token("d2", "damage") }
            .Select(t => MatchplaneSearch.Start(dev.BaseUrl, t).Result).ToList();
        foreach (var s in four) { var seen = Drain(s); Check(seen.Last().Type == "matched", Kinds(seen)); }
        var r = MatchplaneSearch.Start(dev.BaseUrl, token("w", "tank"), new SearchOptions { Transport = SearchTransport.Rest, PollIntervalSeconds = 0.5 }).Result;
        var statuses = new List<SearchMessage>();
        var until = DateTime.UtcNow.AddSeconds(30);
        SearchMessage withWaits = null;
        while (withWaits == null && DateTime.UtcNow < until)
        {
            SearchMessage m;
            while (withWaits == null && r.TryDequeue(out m))
            {
                if (m.Type != "status") continue;
                statuses.Add(m);
                object raw;
                var waits = m.Raw.TryGetValue("roleWaits", out raw) ? raw as Dictionary<string, object> : null;
                if (waits != null && waits.ContainsKey("tank")) withWaits = m;
            }
            Thread.Sleep(16);
        }
        r.Cancel().Wait();
        Check(withWaits != null, "no status with roleWaits.tank: " + string.Join(" | ", statuses.Select(m => Json.Write(m.Raw))));
    }

    static void TheSocketAnswersPings()
    {
        // The server ends a socket that sends no Pong for 10 s (PONG_TIMEOUT); a lone
        // player's search must stay open past that, with its ping measured.
        dev.Duel("unity-ping");
        var ana = dev.Ticket("unity-ping", "ana");
        var s = MatchplaneSearch.Start(dev.BaseUrl, ana[1]).Result;
        var seen = Drain(s, null, 13);
        Check(!s.IsOver, "still searching after 13 s: " + Kinds(seen));
        Check(seen.Any(m => m.Type == "status" && m.PingMs.HasValue), "pingMs measured: " + Kinds(seen));
        s.Cancel().Wait();
        Check(Drain(s).Last().Type == "cancelled", "cancelled");
    }

    static void ABadTokenIsAProblem()
    {
        try
        {
            MatchplaneSearch.Start(dev.BaseUrl, "prj_x.duel.tkt_x.nope").Wait();
            Check(false, "a bad token must be refused");
        }
        catch (AggregateException e)
        {
            var p = e.InnerException as ProblemException;
            Check(p != null && p.Code == "TICKET_INVALID" && p.Status == 401, e.InnerException.ToString());
        }
    }

    /// <summary>
    /// A server that takes the connection and never answers (a black-holed load balancer): the
    /// socket's start fails within its open timeout instead of holding for good.
    /// </summary>
    static void AServerThatNeverAnswersFailsTheStartInTime()
    {
        var silent = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        silent.Start();
        var held = new List<System.Net.Sockets.TcpClient>();
        var accepting = new Thread(() => { try { for (;;) held.Add(silent.AcceptTcpClient()); } catch (Exception) { } });
        accepting.IsBackground = true;
        accepting.Start();
        try
        {
            var url = "http://127.0.0.1:" + ((System.Net.IPEndPoint)silent.LocalEndpoint).Port;
            var options = new SearchOptions { Transport = SearchTransport.WebSocket, OpenTimeoutSeconds = 0.5 };
            var began = DateTime.UtcNow;
            var start = MatchplaneSearch.Start(url, "prj_x.duel.tkt_x.s", options);
            try
            {
                var done = start.Wait(TimeSpan.FromSeconds(20));
                Check(false, done ? "a silent server's start succeeded" : "the start did not give up within 20 s");
            }
            catch (AggregateException e)
            {
                Check(e.InnerException is TimeoutException, e.InnerException.ToString());
                Check(DateTime.UtcNow - began < TimeSpan.FromSeconds(5), "took " + (DateTime.UtcNow - began));
            }
        }
        finally
        {
            silent.Stop();
            foreach (var c in held) c.Close();
        }
    }

    /// <summary>
    /// The sample, twice against one server (as a player searching again would), in a mode
    /// with acceptance: its Accept() answers a real proposal.
    /// </summary>
    static void TheReadmeExampleRunsTwice()
    {
        var readme = File.ReadAllText(Path.Combine(Root(), "README.md"));
        var example = File.ReadAllText(Path.Combine(Root(), "Samples~/Quickstart/MatchmakingFlow.cs")).Trim();
        Check(readme.Contains(example), "README.md must carry Samples~/Quickstart/MatchmakingFlow.cs verbatim");
        dev.Duel("unity-quickstart", "\"acceptance\":{\"timeoutSeconds\":20}");
        for (int run = 1; run <= 2; run++)
        {
            var flows = new[] { new MatchmakingFlow { GiveUpAfterSeconds = 30 }, new MatchmakingFlow { GiveUpAfterSeconds = 30 } };
            int i = 0;
            foreach (var f in flows) f.Begin(dev.BaseUrl, dev.Ticket("unity-quickstart", "p" + i++)[1]).Wait();
            var until = DateTime.UtcNow.AddSeconds(40); // past the flows' own 30 s
            while (flows.Any(f => f.Outcome == null) && DateTime.UtcNow < until)
            {
                foreach (var f in flows) f.Tick(); // one frame
                Thread.Sleep(16);
            }
            foreach (var f in flows)
            {
                Console.WriteLine("  example run " + run + ": shown \"" + f.Shown + "\", outcome \"" + f.Outcome + "\"");
                Check(f.Outcome != null && f.Outcome.StartsWith("matched mat_"), "run " + run + " outcome " + f.Outcome);
                f.Dispose();
            }
        }
    }

    /// <summary>A flow with no match in sight gives up after its own time, and its search ends.</summary>
    static void TheExampleGivesUp()
    {
        dev.Duel("unity-alone");
        var flow = new MatchmakingFlow { GiveUpAfterSeconds = 1 };
        var ana = dev.Ticket("unity-alone", "ana");
        flow.Begin(dev.BaseUrl, ana[1]).Wait();
        var until = DateTime.UtcNow.AddSeconds(10);
        while (flow.Outcome == null && DateTime.UtcNow < until) { flow.Tick(); Thread.Sleep(16); }
        Check(flow.Outcome == "gave up", "outcome " + flow.Outcome);
        var status = "";
        while (DateTime.UtcNow < until && (status = (string)dev.Call("GET", "tickets/" + ana[0], null)["status"]) == "searching") Thread.Sleep(100);
        Check(status == "cancelled", "the search ended: " + status);
    }

    /// <summary>
    /// A server that stops (SIGTERM, a rolling restart) closes the socket with 1001: the game gets
    /// an error saying to search again (before, the search just ended, as if it were over).
    /// </summary>
    static void AServerThatStopsSaysSearchAgain(string bin)
    {
        using (var own = new Dev(bin))
        {
            own.Duel("unity-stops");
            var t = own.Ticket("unity-stops", "ana");
            var s = MatchplaneSearch.Start(own.BaseUrl, t[1], new SearchOptions { Transport = SearchTransport.WebSocket }).Result;
            SearchMessage first = null;
            var until = DateTime.UtcNow.AddSeconds(10);
            while (first == null && DateTime.UtcNow < until) { s.TryDequeue(out first); Thread.Sleep(16); }
            Check(first != null && first.Type == "searching", "searching first");
            own.Terminate();
            var seen = Drain(s, null, 20);
            var last = seen.LastOrDefault();
            Check(last != null && last.Type == "error", "the search ended without an error: " + Kinds(seen));
            Check(last.CloseCode == 1001 && last.SearchAgain, "close " + last.CloseCode + ", search again " + last.SearchAgain);
        }
    }

    /// <summary>
    /// .NET's ClientWebSocket hides the server's pings: the package's own ping tells a quiet socket
    /// (no error) from a silent one, which is cut with an error (1006) within its limit (before,
    /// such a search waited until TCP gave up, many minutes later).
    /// </summary>
    static void ASilentSocketIsCut(string bin)
    {
        using (var own = new Dev(bin))
        {
            own.Duel("unity-silent");
            var t = own.Ticket("unity-silent", "ana");
            var options = new SearchOptions { Transport = SearchTransport.WebSocket, SilenceTimeoutSeconds = 2 };
            var s = MatchplaneSearch.Start(own.BaseUrl, t[1], options).Result;
            var quiet = Drain(s, null, 5);
            Check(quiet.Count > 0 && quiet[0].Type == "searching", "searching first: " + Kinds(quiet));
            Check(!s.IsOver && quiet.All(m => m.IsKnown), "a quiet search was taken for a cut one: " + Kinds(quiet));
            own.Freeze();
            try
            {
                var frozen = DateTime.UtcNow;
                var seen = Drain(s, null, 10);
                var last = seen.LastOrDefault();
                Check(last != null && last.Type == "error" && last.CloseCode == 1006, "a silent socket was not cut: " + Kinds(seen));
                var took = (DateTime.UtcNow - frozen).TotalSeconds;
                Check(took < 6, "cut after " + took + " s");
            }
            finally
            {
                own.Thaw();
            }
        }
    }

    static string Root()
    {
        return Environment.GetEnvironmentVariable("MATCHPLANE_UNITY_ROOT") ?? Directory.GetCurrentDirectory();
    }

    static int Main()
    {
        var bin = Environment.GetEnvironmentVariable("MATCHPLANE_BIN") ?? Path.Combine(Root(), "../../target/debug/matchplane");
        var tests = new List<KeyValuePair<string, Action>> {
            new KeyValuePair<string, Action>("every protocol message parses", EveryProtocolMessageParses),
            new KeyValuePair<string, Action>("a problem names its match (PLAYER_IN_MATCH)", AProblemNamesItsMatch),
            new KeyValuePair<string, Action>("the API version is the document's", TheApiVersionIsTheDocuments),
            new KeyValuePair<string, Action>("the README's install line names the package folder", TheInstallLineNamesThePackageFolder),
            new KeyValuePair<string, Action>("a server that never answers fails the start in time", AServerThatNeverAnswersFailsTheStartInTime),
            new KeyValuePair<string, Action>("two players match over the socket and REST", TwoPlayersMatchOverSocketAndRest),
            new KeyValuePair<string, Action>("cancel on both transports", CancelOnBothTransports),
            new KeyValuePair<string, Action>("a bad token is a problem", ABadTokenIsAProblem),
            new KeyValuePair<string, Action>("over REST the wait in status messages keeps counting", OverRestTheWaitKeepsCounting),
            new KeyValuePair<string, Action>("a role queue's REST status carries roleWaits", ARoleQueueStatusCarriesRoleWaitsOverRest),
            new KeyValuePair<string, Action>("the socket answers pings past the pong timeout", TheSocketAnswersPings),
            new KeyValuePair<string, Action>("both accept and the assignment reaches each player", () => Lifecycle.BothAcceptAndTheAssignmentReachesEachPlayer(dev)),
            new KeyValuePair<string, Action>("a decline fails the decliner and requeues the other, on both transports", () => Lifecycle.ADeclineFailsTheDeclinerAndRequeuesTheOther(dev)),
            new KeyValuePair<string, Action>("over REST an assignment timeout is told, a release is a requeue", () => Lifecycle.OverRestAnAssignmentTimeoutIsToldAndAReleaseIsARequeue(dev)),
            new KeyValuePair<string, Action>("an incomplete party fails with PARTY_INCOMPLETE, on both transports", () => Parties.AnIncompletePartyFailsWithPartyIncomplete(dev)),
            new KeyValuePair<string, Action>("a party the studio ends is cancelled, on both transports", () => Parties.APartyTheStudioEndsIsCancelled(dev)),
            new KeyValuePair<string, Action>("the README example runs twice against one server", TheReadmeExampleRunsTwice),
            new KeyValuePair<string, Action>("the README example gives up after its own time", TheExampleGivesUp),
            new KeyValuePair<string, Action>("a server that stops says to search again (1001)", () => AServerThatStopsSaysSearchAgain(bin)),
            new KeyValuePair<string, Action>("a silent socket is cut (1006), a quiet one is not", () => ASilentSocketIsCut(bin)),
        };
        int passed = 0, failed = 0;
        using (dev = new Dev(bin))
        {
            foreach (var t in tests)
            {
                try { t.Value(); passed++; Console.WriteLine("ok - " + t.Key); }
                catch (Exception e) { failed++; Console.WriteLine("FAILED - " + t.Key + ": " + e); }
            }
        }
        Console.WriteLine(passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
