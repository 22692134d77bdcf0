# receiver.py — python3 examples/receiver.py [port]  (or PORT=…; default 9000)
import base64, hashlib, hmac, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
KEY = base64.b64decode(os.environ["WEBHOOK_SECRET"].removeprefix("whsec_"))
class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))  # raw bytes
        signed = f'{self.headers["webhook-id"]}.{self.headers["webhook-timestamp"]}.'.encode() + body
        expected = "v1," + base64.b64encode(hmac.new(KEY, signed, hashlib.sha256).digest()).decode()
        ok = expected in self.headers["webhook-signature"].split(" ")
        print("verified" if ok else "BAD SIGNATURE", body.decode(), flush=True)
        self.send_response(200 if ok else 400); self.end_headers()
PORT = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PORT", "9000"))
server = HTTPServer(("127.0.0.1", PORT), Hook)
print(f"listening on 127.0.0.1:{PORT}", flush=True)
server.serve_forever()
