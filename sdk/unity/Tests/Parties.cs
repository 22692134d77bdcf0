// Parties as the game client sees them, against a real `matchplane dev` (the server's
// docs/game-modes.md, "parties"): a party whose member never searches fails with
// PARTY_INCOMPLETE naming who is missing, and a party the studio ends is cancelled.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using Matchplane.Client;

static class Parties
{
    /// <summary>Two against two, parties of up to two, an incomplete party failing after 5 s.</summary>
    const string Rules = "\"parties\":{\"allowParties\":true,\"maxSize\":2,\"incompleteTimeoutSeconds\":5}";

    static readonly SearchOptions Rest = new SearchOptions { Transport = SearchTransport.Rest, PollIntervalSeconds = 0.5 };

    static string Party(string id, string a, string b)
    {
        return "{\"id\":\"" + id + "\",\"members\":[\"" + a + "\",\"" + b + "\"]}";
    }

    /// <summary>Drains a search as a game's main thread would, until it is over; fails after 15 s.</summary>
    static List<SearchMessage> UntilOver(MatchplaneSearch s)
    {
        var seen = new List<SearchMessage>();
        var until = DateTime.UtcNow.AddSeconds(15);
        while (true)
        {
            SearchMessage m;
            if (s.TryDequeue(out m))
            {
                seen.Add(m);
                if (m.EndsSearch) return seen;
                continue;
            }
            if (s.IsOver) return seen;
            if (DateTime.UtcNow > until) throw new Exception("nothing ended the search within 15 s: " + Kinds(seen));
            Thread.Sleep(16);
        }
    }

    static string Kinds(List<SearchMessage> seen) { return string.Join(",", seen.Select(m => m.Type)); }

    static void Check(bool ok, string what)
    {
        if (!ok) throw new Exception("check failed: " + what);
    }

    public static void AnIncompletePartyFailsWithPartyIncomplete(Dev dev)
    {
        dev.Duel("unity-party-incomplete", Rules, "[2,2]");
        // cy's party waits for di, ed's for fay; neither ever searches.
        var cy = dev.Ticket("unity-party-incomplete", "cy", Party("party-2", "cy", "di"));
        var ed = dev.Ticket("unity-party-incomplete", "ed", Party("party-3", "ed", "fay"));
        var started = DateTime.UtcNow;
        var overSocket = MatchplaneSearch.Start(dev.BaseUrl, cy[1]).Result;
        var overRest = MatchplaneSearch.Start(dev.BaseUrl, ed[1], Rest).Result;
        var seenRest = new List<SearchMessage>();
        var tr = new Thread(() => seenRest = UntilOver(overRest));
        tr.Start();
        var seenSocket = UntilOver(overSocket);
        tr.Join();
        var elapsed = DateTime.UtcNow - started;
        foreach (var pair in new[] { Tuple.Create(seenSocket, "di"), Tuple.Create(seenRest, "fay") })
        {
            var seen = pair.Item1;
            var last = seen.LastOrDefault();
            Check(last != null && last.Type == "failed" && last.Code == "PARTY_INCOMPLETE", "failed PARTY_INCOMPLETE: " + Kinds(seen));
            Check(last.Message != null && last.Message.EndsWith("missing: " + pair.Item2), "names the missing member: " + last.Message);
            // Until then it waited, saying whom for.
            var waiting = seen.FirstOrDefault(m => m.Type == "status" && m.WaitingReason == "PARTY_INCOMPLETE");
            Check(waiting != null, "waited with PARTY_INCOMPLETE: " + Kinds(seen));
            var missing = ((Dictionary<string, object>)waiting.Raw["waitingReason"])["missing"] as List<object>;
            Check(missing != null && missing.Count == 1 && (string)missing[0] == pair.Item2, "waiting for " + pair.Item2);
        }
        Check(elapsed >= TimeSpan.FromSeconds(5), "failed after " + elapsed + ", before the 5 s timeout");
        overSocket.Dispose();
        overRest.Dispose();
    }

    public static void APartyTheStudioEndsIsCancelled(Dev dev)
    {
        dev.Duel("unity-party-end", Rules, "[2,2]");
        var ana = dev.Ticket("unity-party-end", "ana", Party("party-1", "ana", "ben"));
        var ben = dev.Ticket("unity-party-end", "ben", Party("party-1", "ana", "ben"));
        var overSocket = MatchplaneSearch.Start(dev.BaseUrl, ana[1]).Result;
        var overRest = MatchplaneSearch.Start(dev.BaseUrl, ben[1], Rest).Result;
        // Both searches are live once the socket knows its ticket (REST started on Start).
        var until = DateTime.UtcNow.AddSeconds(15);
        while (overSocket.TicketId == null && DateTime.UtcNow < until) Thread.Sleep(16);
        Check(overSocket.TicketId == ana[0], "the socket is searching");
        var ended = dev.Call("DELETE", "parties/party-1/searches?gameMode=unity-party-end", null);
        var cancelled = ((List<object>)ended["cancelled"]).Cast<string>().OrderBy(t => t, StringComparer.Ordinal);
        Check(cancelled.SequenceEqual(new[] { ana[0], ben[0] }.OrderBy(t => t, StringComparer.Ordinal)), "both ended: " + Json.Write(ended));
        foreach (var s in new[] { overSocket, overRest })
        {
            var seen = UntilOver(s);
            Check(seen.Count > 0 && seen.Last().Type == "cancelled", "cancelled: " + Kinds(seen));
            s.Dispose();
        }
    }
}
