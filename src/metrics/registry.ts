/**
 * Prometheus text exposition (docs/operations.md §4) for the few series we keep; small enough
 * that a client library would be more code than it saves.
 */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const labelText = (labels: Record<string, string>) => {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
};

export class Metrics {
  private readonly requests = new Map<string, number>();
  private readonly durations = new Map<string, { buckets: number[]; sum: number; count: number }>();
  private readonly deliveries = new Map<string, number>();
  rateLimited = 0;

  /** Per request: keys are plain joined strings; label text is built only by render. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const hkey = `${method} ${route}`;
    let h = this.durations.get(hkey);
    if (!h) this.durations.set(hkey, (h = { buckets: BUCKETS.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) h.buckets[i]! += 1;
    h.sum += seconds;
    h.count += 1;
  }

  observeDelivery(outcome: string): void {
    this.deliveries.set(outcome, (this.deliveries.get(outcome) ?? 0) + 1);
  }

  render(gauges: { outboxPending: number; writeBatches: { batches: number; jobs: number } }): string {
    const lines: string[] = [];
    lines.push("# HELP http_requests_total HTTP requests by method, route template and status.");
    lines.push("# TYPE http_requests_total counter");
    for (const [key, n] of this.requests) {
      // Route templates hold no spaces; the method and status none either.
      const [method, route, status] = key.split(" ") as [string, string, string];
      lines.push(`http_requests_total${labelText({ method, route, status })} ${n}`);
    }
    lines.push("# HELP http_request_duration_seconds Request latency.");
    lines.push("# TYPE http_request_duration_seconds histogram");
    for (const [key, h] of this.durations) {
      const [method, route] = key.split(" ") as [string, string];
      BUCKETS.forEach((le, i) => lines.push(`http_request_duration_seconds_bucket${labelText({ method, route, le: String(le) })} ${h.buckets[i]}`));
      lines.push(`http_request_duration_seconds_bucket${labelText({ method, route, le: "+Inf" })} ${h.count}`);
      lines.push(`http_request_duration_seconds_sum${labelText({ method, route })} ${h.sum}`);
      lines.push(`http_request_duration_seconds_count${labelText({ method, route })} ${h.count}`);
    }
    lines.push("# HELP crm_outbox_pending Webhook deliveries waiting to be sent.");
    lines.push("# TYPE crm_outbox_pending gauge");
    lines.push(`crm_outbox_pending ${gauges.outboxPending}`);
    lines.push("# HELP crm_webhook_deliveries_total Delivery attempts by outcome.");
    lines.push("# TYPE crm_webhook_deliveries_total counter");
    for (const outcome of ["succeeded", "failed", "exhausted"]) {
      lines.push(`crm_webhook_deliveries_total${labelText({ outcome })} ${this.deliveries.get(outcome) ?? 0}`);
    }
    lines.push("# HELP crm_write_batches_total Transactions committed for write requests (group commit).");
    lines.push("# TYPE crm_write_batches_total counter");
    lines.push(`crm_write_batches_total ${gauges.writeBatches.batches}`);
    lines.push("# HELP crm_write_batch_requests_total Write requests committed in those transactions.");
    lines.push("# TYPE crm_write_batch_requests_total counter");
    lines.push(`crm_write_batch_requests_total ${gauges.writeBatches.jobs}`);
    lines.push("# HELP crm_rate_limited_total Requests refused with 429.");
    lines.push("# TYPE crm_rate_limited_total counter");
    lines.push(`crm_rate_limited_total ${this.rateLimited}`);
    return `${lines.join("\n")}\n`;
  }
}
