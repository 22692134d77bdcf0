// A small fake of the protocol's acceptance and assignment (which the server
// does not send yet), over HttpListener: the WebSocket and the REST routes.
using System;
using System.Net;
using System.Collections.Generic;
using System.IO;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

sealed class Fake : IDisposable
{
    public readonly string BaseUrl;
    readonly HttpListener listener = new HttpListener();
    int polls, accepted;

    public Fake()
    {
        int port = Dev.FreePort();
        BaseUrl = "http://127.0.0.1:" + port;
        listener.Prefixes.Add(BaseUrl + "/");
        listener.Start();
        Task.Run(Serve);
        tcp.Start();
        SocketUrl = "http://127.0.0.1:" + ((IPEndPoint)tcp.LocalEndpoint).Port;
        Task.Run(ServeSockets);
    }

    async Task Serve()
    {
        while (listener.IsListening)
        {
            HttpListenerContext c;
            try { c = await listener.GetContextAsync(); } catch (Exception) { return; }
            _ = Task.Run(() => Handle(c));
        }
    }

    // The WebSocket side: a minimal RFC 6455 server on its own port (Mono's
    // HttpListener does not upgrade), enough for text frames and a close.
    public readonly string SocketUrl;
    readonly TcpListener tcp = new TcpListener(IPAddress.Loopback, 0);

    async Task ServeSockets()
    {
        while (true)
        {
            TcpClient client;
            try { client = await tcp.AcceptTcpClientAsync(); } catch (Exception) { return; }
            _ = Task.Run(() => Socket(client));
        }
    }

    static void Frame(Stream s, byte opcode, byte[] payload)
    {
        var head = new List<byte> { (byte)(0x80 | opcode) };
        if (payload.Length < 126) head.Add((byte)payload.Length);
        else { head.Add(126); head.Add((byte)(payload.Length >> 8)); head.Add((byte)payload.Length); }
        s.Write(head.ToArray(), 0, head.Count);
        s.Write(payload, 0, payload.Length);
    }

    static void Text(Stream s, string json) { Frame(s, 1, Encoding.UTF8.GetBytes(json)); }

    static byte[] ReadExactly(Stream s, int n)
    {
        var b = new byte[n];
        int got = 0;
        while (got < n) { int r = s.Read(b, got, n - got); if (r <= 0) throw new IOException("closed"); got += r; }
        return b;
    }

    static string ReadText(Stream s)
    {
        var h = ReadExactly(s, 2);
        int len = h[1] & 0x7f;
        if (len == 126) { var e = ReadExactly(s, 2); len = (e[0] << 8) | e[1]; }
        var mask = ReadExactly(s, 4);
        var data = ReadExactly(s, len);
        for (int i = 0; i < len; i++) data[i] ^= mask[i % 4];
        return Encoding.UTF8.GetString(data);
    }

    static void Socket(TcpClient client)
    {
        using (client)
        {
            var s = client.GetStream();
            var reader = new StreamReader(s, Encoding.ASCII, false, 1, true);
            string key = null, line;
            while (!string.IsNullOrEmpty(line = reader.ReadLine()))
                if (line.StartsWith("Sec-WebSocket-Key:", StringComparison.OrdinalIgnoreCase)) key = line.Substring(18).Trim();
            var accept = Convert.ToBase64String(SHA1.Create().ComputeHash(Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")));
            var hello = Encoding.ASCII.GetBytes("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + "\r\n\r\n");
            s.Write(hello, 0, hello.Length);
            Text(s, "{\"type\":\"searching\",\"ticketId\":\"tkt_f\",\"gameMode\":\"duel\",\"queuedAt\":\"t\"}");
            Text(s, "{\"type\":\"backfill_offer\",\"seat\":2}");
            Text(s, "{\"type\":\"proposed\",\"matchId\":\"mat_f\",\"acceptBy\":\"t\",\"teams\":[[\"ana\"],[\"ben\"]]}");
            if (ReadText(s).Contains("accept"))
            {
                Text(s, "{\"type\":\"matched\",\"match\":{\"matchId\":\"mat_f\"}}");
                Text(s, "{\"type\":\"assigned\",\"connection\":\"203.0.113.7:7777\",\"data\":{\"map\":\"dust\"}}");
            }
            else Text(s, "{\"type\":\"failed\",\"code\":\"MATCH_DECLINED\",\"message\":\"declined\"}");
            Frame(s, 8, new byte[] { 0x03, 0xE8 });
            try { ReadExactly(s, 2); } catch (IOException) { }
        }
    }

    void Handle(HttpListenerContext c)
    {
        var path = c.Request.Url.AbsolutePath;
        string body;
        int status = 200;
        string baseJson = "\"ticketId\":\"tkt_f\",\"gameMode\":\"duel\",\"playerId\":\"ana\",\"expiresAt\":\"t\",\"queuedAt\":\"t\"";
        if (c.Request.HttpMethod == "POST" && path == "/v1/searches") { status = 202; body = "{\"ticketId\":\"tkt_f\",\"status\":\"searching\"}"; }
        else if (c.Request.Headers["Authorization"] != "Ticket tok") { status = 401; body = "{\"status\":401,\"code\":\"TICKET_INVALID\",\"detail\":\"no\"}"; }
        else if (path == "/v1/searches/tkt_f/accept") { accepted = 1; body = "{\"status\":\"proposed\"}"; }
        else
        {
            int n = polls++;
            if (n == 0) body = "{" + baseJson + ",\"status\":\"searching\",\"waitingReason\":{\"code\":\"NO_CANDIDATES\"}}";
            else if (accepted == 0) body = "{" + baseJson + ",\"status\":\"proposed\",\"proposal\":{\"matchId\":\"mat_f\",\"acceptBy\":\"t\",\"accepted\":[]}}";
            else if (accepted == 1) { accepted = 2; body = "{" + baseJson + ",\"status\":\"matched\",\"match\":{\"matchId\":\"mat_f\"},\"assignment\":null}"; }
            else body = "{" + baseJson + ",\"status\":\"matched\",\"match\":{\"matchId\":\"mat_f\"},\"assignment\":{\"connection\":\"203.0.113.7:7777\",\"data\":{}}}";
        }
        var bytes = Encoding.UTF8.GetBytes(body);
        c.Response.StatusCode = status;
        c.Response.ContentType = "application/json";
        c.Response.OutputStream.Write(bytes, 0, bytes.Length);
        c.Response.Close();
    }

    public void Dispose() { listener.Stop(); tcp.Stop(); }
}
