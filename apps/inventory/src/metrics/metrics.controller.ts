import type { IncomingMessage, ServerResponse } from 'node:http';
import { Controller, Get, Req, Res } from '@nestjs/common';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';

/**
 * GET /metrics: the library's lock metrics (and any other OpenTelemetry instrument of the app) in the
 * Prometheus text format, e.g. `distributed_lock_wait_duration_bucket{lock_kind="reentrant",
 * lock_name="product:*",lock_outcome="acquired",le="0.05"} 97`, written by the exporter's own handler.
 */
@Controller('metrics')
export class MetricsController {
  constructor(private readonly exporter: PrometheusExporter) {}

  @Get()
  scrape(@Req() request: IncomingMessage, @Res() response: ServerResponse): void {
    this.exporter.getMetricsRequestHandler(request, response);
  }
}
