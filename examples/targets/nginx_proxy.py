"""Debian's nginx as a reverse proxy in front of the mock, with a JSON access log.

The target of the calibration round trip (README "Calibrating from your
traffic"): Plimsoll starts it with PORT and UPSTREAM_URL; it writes an
nginx.conf into its work directory and execs nginx in the foreground, one
worker (`WORKERS` more), so the cgroup Plimsoll pins it in holds master and workers.
Every request is logged as one JSON line (`ACCESS_LOG`, appended; `off` for none) with
the fields
`plimsoll calibrate --format nginx-json` reads, the client id from
X-Forwarded-For
(`xff`), and an MCP request's JSON-RPC method from its Mcp-Method header.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from urllib.parse import urlsplit

LOG_FORMAT = (
    '{"msec":"$msec","remote_addr":"$remote_addr","xff":"$http_x_forwarded_for",'
    '"request":"$request","status":"$status","request_time":"$request_time",'
    '"upstream_response_time":"$upstream_response_time","body_bytes_sent":"$body_bytes_sent",'
    '"mcp_method":"$http_mcp_method"}'
)


def config(port: str, upstream: str, work: Path, access_log: str, workers: int = 1) -> str:
    mock = urlsplit(upstream)
    temp = work / "tmp"
    logged = "access_log off;" if access_log == "off" else f"access_log {access_log} plimsoll;"
    return f"""
daemon off;
worker_processes {workers};
pid {work}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 4096; }}
http {{
    log_format plimsoll escape=json '{LOG_FORMAT}';
    {logged}
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    keepalive_requests 100000;
    upstream mock {{
        server {mock.hostname}:{mock.port};
        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port};
        location = /healthz {{ access_log off; return 200 "ok\\n"; }}
        location / {{
            proxy_pass http://mock;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 120s;
        }}
    }}
}}
"""


def main() -> None:
    work = Path(os.environ.get("PLIMSOLL_WORKDIR", ".")) / "nginx-proxy"
    (work / "tmp").mkdir(parents=True, exist_ok=True)
    access_log = os.environ.get("ACCESS_LOG", str(work / "access.json"))
    conf = work / "nginx.conf"
    workers = int(os.environ.get("WORKERS", "1"))
    conf.write_text(
        config(os.environ["PORT"], os.environ["UPSTREAM_URL"], work, access_log, workers)
    )
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    sys.stdout.flush()
    os.execv(nginx, [nginx, "-c", str(conf), "-p", str(work), "-e", "stderr"])


if __name__ == "__main__":
    main()
