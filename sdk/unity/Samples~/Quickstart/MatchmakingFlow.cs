// The game-client side in a Unity scene: start a search with the ticket's token
// (from your backend), show the status, accept a proposal, and read where to play.
// Call Tick() from a MonoBehaviour's Update(): messages are handled on the main thread.
using System;
using Matchplane.Client;

public sealed class MatchmakingFlow : IDisposable
{
    MatchplaneSearch search;
    DateTime giveUpAt;
    public string Outcome;   // "matched mat_…", "assigned 203.0.113.7:7777", "failed …", "gave up"
    public string Shown = ""; // what the UI would show
    public double GiveUpAfterSeconds = 120; // every wait ends: stop searching after this long

    public async System.Threading.Tasks.Task Begin(string serverUrl, string ticketToken)
    {
        giveUpAt = DateTime.UtcNow.AddSeconds(GiveUpAfterSeconds);
        search = await MatchplaneSearch.Start(serverUrl, ticketToken);
    }

    public void Tick()
    {
        SearchMessage m;
        while (search != null && search.TryDequeue(out m))
        {
            switch (m.Type)
            {
                case "searching": Shown = "Searching…"; break;
                case "status": Shown = "Waiting " + Math.Round(m.WaitSeconds) + " s"; break;
                case "proposed": Shown = "Match found!"; _ = search.Accept(); break;
                case "requeued": Shown = "Back in the queue"; break;
                case "matched": Outcome = "matched " + m.MatchId; break;
                case "assigned": Outcome = "assigned " + m.Connection; break;
                case "failed": case "error": Outcome = "failed " + m.Code; break;
                case "cancelled": case "expired": Outcome = m.Type; break;
            }
        }
        if (search != null && Outcome == null && DateTime.UtcNow > giveUpAt)
        {
            Outcome = "gave up";
            search.Dispose(); // closing the socket ends the search
        }
    }

    public void Dispose()
    {
        if (search != null) search.Dispose();
    }
}
