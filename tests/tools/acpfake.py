#!/usr/bin/env python3
"""acpfake: a loopback stand-in for SenseCore ACP, for tests/conformance.test.sh.

    acpfake.py --socket TRAINJOBD_SOCK [--engine-tcp HOST:PORT] --port-file FILE
               [--newer PREFIX]

Listens on 127.0.0.1 (a port the kernel picks, written to FILE once it
listens) and answers the paths an ACP context (driver: acp) calls:

  * the training-job paths (/compute/acp/data/v2/.../trainingJobs...) are
    forwarded to the trainjobd on the Unix socket TRAINJOBD_SOCK, which
    serves the same paths, and its replies are reshaped to the shapes of
    SenseCore's public TrainingJob schema: schemas/acp.json of the public
    repository NotDesigned/SLAI-sensecore-tool (commit
    74a56c0c4fa3346c88c90d59872fd2b807b32507) and SenseCore's list-workers
    API page (sensecore.cn/help/docs/API/acp/6-training-job-service-list-workers);
  * the workspace's pool bindings (/compute/workspace/data/v1/...) and each
    pool's resource specs (/compute/aec2/data/v1/...), built from trainjobd's
    catalog, in the shapes api/acp_catalog.c reads;
  * everything else, trainjobd's own paths (/trainjob/v1/...: events,
    start, markNode, watch, logs, scalars, the catalog) among them, answers
    404, as real ACP does: it has none of them.

Each reshaping says whether its shape is in the public schema or INFERRED
(not in it: what a client can only guess of the live server).

With --newer PREFIX, a job whose name starts with PREFIX is answered the way
a newer server would: values this build's enums do not know (state
PREEMPTED, framework JAX, mount type PV_BOS, fault action RESTART_NODE,
priority URGENT, quota ON_DEMAND), a field it does not know, and numeric
`limits` on its resource spec.

Requests must carry an Authorization header (the ACP context signs them
with its AK/SK, api/hmac.c). Over the Unix socket trainjobd trusts the
peer's uid: the fake's user owns every job. With --engine-tcp the
training-job requests go instead to trainjobd's TCP listener with the
client's signing headers as they came (the signature covers the method,
path, body, date and nonce, none of which the fake changes): trainjobd
checks it and knows the caller by the access key, as ACP knows a user by
the AK, so several users can share one fake. The catalog is read over the
socket either way. Python 3 standard library only. Stopped by the test by
its pid.
"""
import argparse
import datetime
import http.client
import http.server
import json
import os
import re
import socket
import sys
import urllib.parse

ACP_JOBS = re.compile(
    r"^/compute/acp/data/v2/subscriptions/[^/]+/resourceGroups/[^/]+/zones/[^/]+"
    r"/workspaces/(?P<ws>[^/]+)/trainingJobs(?P<rest>.*)$")
BINDINGS = re.compile(
    r"^/compute/workspace/data/v1/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)"
    r"/zones/(?P<zone>[^/]+)/workspaces/(?P<ws>[^/]+)/workspaceAEC2Bindings$")
SPECS = re.compile(
    r"^/compute/aec2/data/v1/subscriptions/[^/]+/resourceGroups/[^/]+/zones/[^/]+"
    r"/aec2s/(?P<pool>[^/]+)/resourceSpecs$")

# The TrainingJob's top-level properties in the public schema: every other
# key trainjobd adds (state_message, restart_count, ready_workers,
# faulty_workers, ...) is trainjobd's own and is removed.
SCHEMA_TOP = {
    "subscription_name", "resource_group_name", "zone", "workspace_name", "name", "uid",
    "display_name", "id", "ownership", "framework", "roles", "env", "mount", "tensorboard",
    "scheduling", "resource_pool", "state", "root_mapping", "fault_tolerance", "ssh",
    "barrier", "create_time", "start_time", "suspend_time", "update_time", "complete_time",
    "delete_time", "fine_tuning_specs", "async_checkpoint", "lme",
}
SCHEMA_SCHEDULING = {"priority", "quota_type", "scoring_strategy"}
TIME_KEYS = ("create_time", "start_time", "suspend_time", "update_time", "complete_time",
             "delete_time")
# The list-workers page's worker fields.
WORKER_KEYS = {"uid", "id", "name", "namespace", "node_name", "ip", "host_ip", "phase",
               "init_containers", "containers", "node_spec_name", "create_time", "update_time"}


def acp_time(s):
    """An RFC 3339 time as the schema's examples print it: milliseconds and Z
    ("2024-11-04T06:28:49.180Z", the list-workers page)."""
    if not isinstance(s, str) or not s:
        return s
    try:
        t = datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return s
    t = t.astimezone(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


# The headers api/hmac.c signs with, forwarded as they came with --engine-tcp.
SIGNING = ("Authorization", "X-Date", "Date", "Digest", "X-Nonce")


class Fake:
    def __init__(self, sock, tcp, newer):
        self.sock = sock
        self.tcp = tcp
        self.newer = newer

    def engine(self, method, path, body=None, signed=None):
        """One request to trainjobd: over TCP with the client's signing
        headers when signed (and --engine-tcp), else over its Unix socket;
        (status, bytes)."""
        h = {"Content-Type": "application/json"} if body else {}
        if signed is not None and self.tcp:
            host, port = self.tcp.rsplit(":", 1)
            c = http.client.HTTPConnection(host, int(port), timeout=60)
            for k in SIGNING:
                if signed.get(k):
                    h[k] = signed.get(k)
        else:
            c = http.client.HTTPConnection("localhost", timeout=60)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(60)
            s.connect(self.sock)
            c.sock = s
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def reshape_job(self, j):
        if not isinstance(j, dict):
            return j
        if "restart_count" in j:
            # INFERRED: the schema's only retry count is lme.current_retries
            # ("current retries, 0 by default"; lme is deprecated for
            # fault_tolerance, which has none): trainjobd's restart_count there.
            lme = j.setdefault("lme", {})
            if isinstance(lme, dict):
                lme["current_retries"] = j["restart_count"]
        for k in list(j):
            if k not in SCHEMA_TOP:
                del j[k]  # schema: trainjobd's own fields are not on ACP
        s = j.get("scheduling")
        if isinstance(s, dict):
            for k in list(s):
                if k not in SCHEMA_SCHEDULING:
                    del s[k]  # schema: preemptible is trainjob's word, not ACP's
        for role in j.get("roles") or []:
            specs = role.get("resource_spec") or []
            # INFERRED (not in the schema; what clients that ran against ACP
            # report): a GET carries both total_replicas and the per-spec replicas.
            if len(specs) == 1 and "total_replicas" in role:
                specs[0].setdefault("replicas", role["total_replicas"])
            for sp in specs:
                # schema: a spec's description is output-only; its value (the
                # spec's name) is INFERRED.
                sp.setdefault("description", sp.get("name", ""))
        for k in TIME_KEYS:
            if k in j:
                j[k] = acp_time(j[k])
        name = j.get("name") or ""
        if self.newer and name.startswith(self.newer):
            self.inject_newer(j)
        return j

    @staticmethod
    def inject_newer(j):
        # INFERRED: what a newer server might send; none of these values is in
        # the public schema's enums, which is the point.
        j["state"] = "PREEMPTED"
        j["framework"] = "JAX"
        j.setdefault("scheduling", {})
        j["scheduling"]["priority"] = "URGENT"
        j["scheduling"]["quota_type"] = "ON_DEMAND"
        j["mount"] = (j.get("mount") or []) + [
            {"type": "PV_BOS", "id": "bos-1", "mount_path": "/mnt/bos"}]
        ft = j.setdefault("fault_tolerance", {})
        ft["rules"] = (ft.get("rules") or []) + [
            {"exit_codes": "137", "action": "RESTART_NODE"}]
        for role in j.get("roles") or []:
            for sp in role.get("resource_spec") or []:
                sp["limits"] = {"cpu": 4, "memory": 8589934592, "device": 1}
        j["quantum_entanglement"] = {"enabled": True, "qubits": 7}

    @staticmethod
    def reshape_worker(w):
        if not isinstance(w, dict):
            return w
        # the page's fields only; phase keeps trainjobd's Pending/Running/
        # Succeeded/Failed: the page gives no values (INFERRED: Kubernetes' pod phases)
        out = {k: v for k, v in w.items() if k in WORKER_KEYS}
        for k in ("create_time", "update_time"):
            if k in out:
                out[k] = acp_time(out[k])
        # the page: containers carry resources and a device_type; values INFERRED
        out.setdefault("containers", [{"name": "container-worker-0",
                                       "resources": {"limits": {}, "requests": {}}}])
        out.setdefault("namespace", "acp")
        return out

    def catalog(self):
        st, data = self.engine("GET", "/trainjob/v1/catalog")
        return json.loads(data) if st == 200 else {}


def error_body(code, reason, message):
    # INFERRED: the error shape, google.rpc Status-like (details[].reason), as
    # clients that ran against ACP read it; the API pages show none.
    return json.dumps({"code": code, "message": message,
                       "details": [{"reason": reason}]}).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake = None

    def log_message(self, fmt, *args):
        sys.stderr.write("acpfake: %s %s\n" % (self.command, self.path))

    def reply(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        if not self.headers.get("Authorization"):
            return self.reply(401, error_body(16, "Unauthenticated", "no Authorization header"))
        u = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(u.path)
        m = ACP_JOBS.match(path)
        if m:
            return self.jobs(m.group("rest"), body)
        m = BINDINGS.match(path)
        if m and self.command == "GET":
            return self.bindings(m)
        m = SPECS.match(path)
        if m and self.command == "GET":
            return self.specs(m.group("pool"))
        return self.reply(404, error_body(5, "NotFound", "no such path on ACP: %s" % u.path))

    def jobs(self, rest, body):
        f = self.fake
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if "watch" in q or "view" in q:
            # trainjobd's watch stream and BASIC rows are not ACP's
            return self.reply(400, error_body(3, "InvalidArgument", "unknown query parameter"))
        if self.command == "POST" and rest == "" and body:
            # schema: env "at most 10"; the reason word is INFERRED
            try:
                env = json.loads(body).get("env") or []
            except (ValueError, AttributeError):
                env = []
            if len(env) > 10:
                return self.reply(400, error_body(
                    3, "tjInvalidEnvCount", "env: %d variables, at most 10" % len(env)))
        st, data = f.engine(self.command, self.path, body, signed=self.headers)
        if st >= 300:
            return self.reply(st, data)
        try:
            j = json.loads(data)
        except ValueError:
            return self.reply(502, error_body(13, "Internal", "trainjobd sent no JSON"))
        if rest.startswith(":batch"):
            # INFERRED: the batch calls' reply is not documented. The fake
            # answers an empty object (google.protobuf.Empty) whatever the
            # names, a missing one too: the least a client can count on, so
            # what it says of a job must come from asking for the job.
            return self.reply(200, b"{}")
        if rest.endswith("/workers"):
            j["workers"] = [f.reshape_worker(w) for w in j.get("workers") or []]
        elif "training_jobs" in j:
            j["training_jobs"] = [f.reshape_job(x) for x in j.get("training_jobs") or []]
        else:
            j = f.reshape_job(j)
        return self.reply(st, json.dumps(j).encode())

    def bindings(self, m):
        # The bindings shape is api/acp_catalog.c's (UNVERIFIED there, INFERRED here).
        cat = self.fake.catalog()
        ws = m.group("ws")
        pools = []
        for w in cat.get("workspaces") or []:
            if w.get("name") == ws:
                pools = w.get("pools") or []
        out = []
        for p in pools:
            out.append({"id": "/subscriptions/%s/resourceGroups/%s/zones/%s/aec2s/%s" % (
                m.group("sub"), m.group("rg"), m.group("zone"), p),
                "name": p, "state": "RUNNING", "quota_type": "RESERVED"})
        return self.reply(200, json.dumps({"aec2s": out}).encode())

    def specs(self, pool):
        # The resource-spec shape is api/acp_catalog.c's (UNVERIFIED there, INFERRED here).
        cat = self.fake.catalog()
        out = []
        for p in cat.get("pools") or []:
            if p.get("name") != pool:
                continue
            for s in p.get("specs") or []:
                out.append({"name": s.get("name"),
                            "device": {"number": str(s.get("devices", 0)),
                                       "type": s.get("device_type", "")},
                            "cpu": {"vcpu_allocatable": str(s.get("vcpus", 0))},
                            "memory": {"allocatable": "%dMi" % s.get("memory_mib", 0)}})
        if not out:
            return self.reply(404, error_body(5, "NotFound", "no pool %s" % pool))
        return self.reply(200, json.dumps({"resource_specs": out,
                                           "next_page_token": ""}).encode())

    do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = handle_any


def main():
    ap = argparse.ArgumentParser(description="a loopback SenseCore ACP over trainjobd")
    ap.add_argument("--socket", required=True, help="trainjobd's Unix socket")
    ap.add_argument("--engine-tcp", default="", metavar="HOST:PORT",
                    help="trainjobd's TCP listener, for the signed training-job requests")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--newer", default="", help="jobs named with this prefix get newer values")
    a = ap.parse_args()
    Handler.fake = Fake(a.socket, a.engine_tcp, a.newer)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
