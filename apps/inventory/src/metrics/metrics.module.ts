import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { MetricsController } from './metrics.controller.js';

/**
 * The OpenTelemetry metrics SDK with the Prometheus exporter as its reader (no server of its own:
 * GET /metrics serves it, see MetricsController). The lock library records into the MeterProvider
 * given to it (app.module.ts); a real application registers its SDK globally instead (NodeSDK,
 * `metrics.setGlobalMeterProvider`) and the library finds it there.
 */
@Module({
  controllers: [MetricsController],
  providers: [
    { provide: PrometheusExporter, useFactory: () => new PrometheusExporter({ preventServerStart: true }) },
    { provide: MeterProvider, useFactory: (exporter: PrometheusExporter) => new MeterProvider({ readers: [exporter] }), inject: [PrometheusExporter] },
  ],
  exports: [MeterProvider],
})
export class MetricsModule implements OnApplicationShutdown {
  constructor(@Inject(MeterProvider) private readonly provider: MeterProvider) {}

  async onApplicationShutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}
