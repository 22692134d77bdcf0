// Starts a real `matchplane dev --demo` on a free port (MATCHPLANE_BIN, else
// ../../target/debug/matchplane) and makes modes and tickets with its demo key.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Text;
using Matchplane.Client;

sealed class Dev : IDisposable
{
    public string BaseUrl, Project, Key;
    readonly Process process;
    readonly string dir;
    static readonly HttpClient Http = new HttpClient();

    public static int FreePort()
    {
        var l = new TcpListener(IPAddress.Loopback, 0);
        l.Start();
        int port = ((IPEndPoint)l.LocalEndpoint).Port;
        l.Stop();
        return port;
    }

    public Dev(string bin)
    {
        int port = FreePort();
        dir = Path.Combine(Path.GetTempPath(), "mp-sdk-unity-" + port);
        Directory.CreateDirectory(dir);
        var info = new ProcessStartInfo(bin,
            "dev --demo --listen 127.0.0.1:" + port + " --database-url sqlite://" + Path.Combine(dir, "dev.db") + "?mode=rwc --operator-token sdk-unity-operator")
        { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        info.EnvironmentVariables.Remove("REDIS_URL");
        process = Process.Start(info);
        var found = new System.Threading.ManualResetEventSlim();
        string line = null;
        process.OutputDataReceived += (s, e) =>
        {
            if (e.Data != null && e.Data.StartsWith("demo: project") && line == null) { line = e.Data; found.Set(); }
        };
        process.ErrorDataReceived += (s, e) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        if (!found.Wait(TimeSpan.FromSeconds(60))) throw new Exception("dev --demo printed no demo line");
        // "demo: project prj_…, API key mp_sk_…"
        var words = line.Split(' ');
        BaseUrl = "http://127.0.0.1:" + port;
        Project = words[2].TrimEnd(',');
        Key = words[5];
    }

    public Dictionary<string, object> Call(string method, string path, string json)
    {
        var request = new HttpRequestMessage(new HttpMethod(method), BaseUrl + "/v1/projects/" + Project + "/" + path);
        request.Headers.TryAddWithoutValidation("Authorization", "Bearer " + Key);
        if (json != null) request.Content = new StringContent(json, Encoding.UTF8, "application/json");
        var response = Http.SendAsync(request).Result;
        var body = response.Content.ReadAsStringAsync().Result;
        if (!response.IsSuccessStatusCode) throw new Exception(method + " " + path + ": " + body);
        return Json.Parse(body) as Dictionary<string, object>;
    }

    /// <summary>
    /// A duel mode (or `shape`, e.g. "[2,2]"); `extra` adds members to its config (e.g.
    /// "\"acceptance\":{…}").
    /// </summary>
    public void Duel(string name, string extra = null, string shape = "[1,1]")
    {
        Call("PUT", "game-modes/" + name, "{\"name\":\"" + name + "\",\"matchShape\":" + shape + ",\"matchmakingCycleDurationSeconds\":1," +
            "\"algorithm\":{\"type\":\"mmr\",\"minMmr\":0,\"maxMmr\":3000,\"baseTolerance\":100,\"expansionMultiplier\":2}" +
            (extra == null ? "" : "," + extra) + "}");
    }

    /// <summary>A ticket's (ticketId, token); `party` is the ticket's party, e.g. "{\"id\":\"p\",\"members\":[…]}".</summary>
    public string[] Ticket(string mode, string player, string party = null)
    {
        var t = Call("POST", "tickets", "{\"gameMode\":\"" + mode + "\",\"playerId\":\"" + player + "\",\"attributes\":{\"mmr\":1500}" +
            (party == null ? "" : ",\"party\":" + party) + "}");
        return new[] { (string)t["ticketId"], (string)t["token"] };
    }

    /// <summary>Stops the server as a rolling restart does (SIGTERM) and waits for it to exit.</summary>
    public void Terminate()
    {
        Process.Start("kill", "-TERM " + process.Id).WaitForExit();
        process.WaitForExit(20000);
    }

    /// <summary>Freezes the server (SIGSTOP): its sockets stay open and say nothing, as over a dead path.</summary>
    public void Freeze()
    {
        Process.Start("kill", "-STOP " + process.Id).WaitForExit();
    }

    /// <summary>Lets a frozen server run again (SIGCONT).</summary>
    public void Thaw()
    {
        Process.Start("kill", "-CONT " + process.Id).WaitForExit();
    }

    public void Dispose()
    {
        try { process.Kill(); process.WaitForExit(5000); } catch (Exception) { }
        try { Directory.Delete(dir, true); } catch (Exception) { }
    }
}
