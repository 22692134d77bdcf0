// Acceptance and assignment against a real `matchplane dev` (the server's
// docs/acceptance.md): proposals answered over the socket and over REST,
// declines, and the studio's assignment reaching both players.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using Matchplane.Client;

static class Lifecycle
{
    /// <summary>Acceptance (20 s to answer) and assignment (60 s to assign).</summary>
    const string Rules = "\"acceptance\":{\"timeoutSeconds\":20},\"assignment\":{\"waitSeconds\":60}";

    static readonly SearchOptions Rest = new SearchOptions { Transport = SearchTransport.Rest, PollIntervalSeconds = 0.5 };

    /// <summary>
    /// Drains a search as a game's main thread would, answering every proposal (accept or
    /// decline), until a message `stop` holds for or the search is over; fails after 30 s.
    /// </summary>
    static List<SearchMessage> Until(MatchplaneSearch s, bool accept, Func<SearchMessage, bool> stop = null)
    {
        var seen = new List<SearchMessage>();
        var until = DateTime.UtcNow.AddSeconds(30);
        while (true)
        {
            SearchMessage m;
            if (s.TryDequeue(out m))
            {
                seen.Add(m);
                if (m.Type == "proposed") (accept ? s.Accept() : s.Decline()).Wait();
                if ((stop != null && stop(m)) || m.EndsSearch) return seen;
                continue;
            }
            if (s.IsOver) return seen;
            if (DateTime.UtcNow > until) throw new Exception("nothing ended the search within 30 s: " + Kinds(seen));
            Thread.Sleep(16);
        }
    }

    static string Kinds(List<SearchMessage> seen) { return string.Join(",", seen.Select(m => m.Type)); }

    static void Check(bool ok, string what)
    {
        if (!ok) throw new Exception("check failed: " + what);
    }

    public static void BothAcceptAndTheAssignmentReachesEachPlayer(Dev dev)
    {
        dev.Duel("unity-assign", Rules);
        var ana = dev.Ticket("unity-assign", "ana");
        var ben = dev.Ticket("unity-assign", "ben");
        var a = MatchplaneSearch.Start(dev.BaseUrl, ana[1]).Result;
        var b = MatchplaneSearch.Start(dev.BaseUrl, ben[1], Rest).Result;
        var seenB = new List<SearchMessage>();
        var tb = new Thread(() => seenB = Until(b, true));
        tb.Start();
        // The studio assigns a server once the match is made (when its match.made webhook
        // would arrive): its status turns `made` after the last accept.
        string matchId = null;
        var studio = new Thread(() =>
        {
            var until = DateTime.UtcNow.AddSeconds(30);
            while (matchId == null && DateTime.UtcNow < until)
            {
                var ticket = dev.Call("GET", "tickets/" + ana[0], null);
                object match;
                if (ticket.TryGetValue("match", out match) && match is Dictionary<string, object>)
                {
                    var id = (string)((Dictionary<string, object>)match)["matchId"];
                    if ((string)dev.Call("GET", "matches/" + id, null)["status"] == "made") matchId = id;
                }
                if (matchId == null) Thread.Sleep(200);
            }
            if (matchId == null) return;
            dev.Call("POST", "matches/" + matchId + "/assignment", "{\"connection\":\"203.0.113.7:7777\",\"data\":{\"map\":\"dust\"}," +
                "\"players\":{\"ana\":{\"data\":{\"joinToken\":\"a1\"}},\"ben\":{\"data\":{\"joinToken\":\"b2\"}}}}");
        });
        studio.Start();
        var seenA = Until(a, true);
        tb.Join();
        studio.Join();
        Check(matchId != null, "the match was made");
        foreach (var pair in new[] { Tuple.Create(seenA, "a1"), Tuple.Create(seenB, "b2") })
        {
            var seen = pair.Item1;
            Check(seen.Any(m => m.Type == "proposed"), "proposed: " + Kinds(seen));
            Check(seen.Any(m => m.Type == "matched" && m.MatchId == matchId), "matched " + matchId + ": " + Kinds(seen));
            var last = seen.Last();
            Check(last.Type == "assigned" && last.Connection == "203.0.113.7:7777", "assigned: " + Kinds(seen));
            var data = (Dictionary<string, object>)last.Raw["data"];
            Check((string)data["map"] == "dust" && (string)data["joinToken"] == pair.Item2, "own data: " + Json.Write(data));
        }
    }

    public static void ADeclineFailsTheDeclinerAndRequeuesTheOther(Dev dev)
    {
        dev.Duel("unity-decline", Rules);
        // Each transport declines once while the other accepts.
        foreach (var declinerRest in new[] { false, true })
        {
            var decliner = dev.Ticket("unity-decline", declinerRest ? "cy" : "ana");
            var other = dev.Ticket("unity-decline", declinerRest ? "di" : "ben");
            var declining = MatchplaneSearch.Start(dev.BaseUrl, decliner[1], declinerRest ? Rest : null).Result;
            var accepting = MatchplaneSearch.Start(dev.BaseUrl, other[1], declinerRest ? null : Rest).Result;
            // One accepts first, then the other declines: the order is fixed.
            var accepted = Until(accepting, true, m => m.Type == "proposed");
            Check(accepted.Last().Type == "proposed", "proposed: " + Kinds(accepted));
            var declined = Until(declining, false);
            Check(declined.Any(m => m.Type == "proposed"), "decliner proposed: " + Kinds(declined));
            Check(declined.Last().Type == "failed" && declined.Last().Code == "MATCH_DECLINED", "declined: " + Kinds(declined));
            // The one who accepted is back in the queue, its search still open.
            var requeued = Until(accepting, true, m => m.Type == "requeued");
            Check(requeued.Last().Type == "requeued", "requeued: " + Kinds(requeued));
            Check((string)dev.Call("GET", "tickets/" + other[0], null)["status"] == "searching", "still searching");
            accepting.Cancel().Wait();
            var rest = Until(accepting, true);
            Check(rest.Last().Type == "cancelled" && !rest.Any(m => m.Type == "matched"), "cancelled: " + Kinds(rest));
            declining.Dispose();
            accepting.Dispose();
        }
    }

    /// <summary>
    /// Over REST, an assignment timeout is told as assignment_timeout then requeued, and a
    /// studio's release as requeued only, from the server's own released statuses (their
    /// `reason`, the server's docs/searching.md).
    /// </summary>
    public static void OverRestAnAssignmentTimeoutIsToldAndAReleaseIsARequeue(Dev dev)
    {
        foreach (var release in new[] { false, true })
        {
            var name = release ? "unity-rest-release" : "unity-rest-timeout";
            dev.Duel(name, "\"assignment\":{\"waitSeconds\":" + (release ? 60 : 1) + "}");
            var searches = new[] { "ana", "ben" }
                .Select(p => MatchplaneSearch.Start(dev.BaseUrl, dev.Ticket(name, p)[1], Rest).Result).ToList();
            var seen = searches.Select(s => Until(s, true, m => m.Type == "matched")).ToList();
            if (release) dev.Call("POST", "matches/" + seen[0].Last().MatchId + "/release", null);
            for (var i = 0; i < searches.Count; i++)
            {
                seen[i].AddRange(Until(searches[i], true, m => m.Type == "requeued"));
                var kinds = string.Join(",", seen[i].Select(m => m.Type).Where(k => k != "status"));
                var expected = release ? "searching,matched,requeued" : "searching,matched,assignment_timeout,requeued";
                Check(kinds == expected, name + ": " + kinds);
            }
            foreach (var s in searches) s.Dispose();
        }
    }
}
