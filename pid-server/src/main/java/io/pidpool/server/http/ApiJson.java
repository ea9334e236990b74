package io.pidpool.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.OperationType;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.BatchRecord;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The JSON shapes of the API and the one {@link ObjectMapper} that reads and writes them. Responses
 * are built from these records only, so not even a sealed secret (inside {@code Operation.Add<SealedSecret>})
 * is ever serialized.
 */
final class ApiJson {
    private ApiJson() {}

    static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .addModule(new JavaTimeModule())
            .addModule(coreTypes())
            .build();

    /** The body of every error answer. */
    record Error(String error, String field, String code) {}

    /**
     * {@code GET /api/v1/cluster}.
     *
     * @param you who asked: the token's name and role (the console shows only what the role may do)
     */
    record Cluster(
            String cluster,
            String self,
            String leader,
            Epoch epoch,
            List<OperatorApi.Member> members,
            HealthCheck.Report health,
            You you) {}

    /** The caller: its token's name and role ({@code viewer}, {@code operator}, {@code admin}). */
    record You(String name, String role) {
        static You of(Principal principal) {
            return new You(principal.name(), principal.role().name().toLowerCase(java.util.Locale.ROOT));
        }
    }

    record Modules(List<OperatorApi.ModuleView> modules) {}

    /** An operation as echoed back: ids and settings, never secrets. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record OperationView(
            int index,
            OperationType type,
            ModuleKey module,
            ModuleKey to,
            List<String> pids,
            Integer servers,
            Long monthlyDemand,
            Long rebalanceDelayMs) {

        static OperationView of(int index, Operation<SealedSecret> op) {
            // Java 17: no pattern switch yet; the sealed hierarchy is small
            if (op instanceof Operation.Add<SealedSecret> add) {
                return new OperationView(index, op.type(), add.module(), null, op.pidIds(), null, null, null);
            }
            if (op instanceof Operation.Migrate<SealedSecret> migrate) {
                return new OperationView(index, op.type(), null, migrate.to(), op.pidIds(), null, null, null);
            }
            if (op instanceof Operation.SetServers<SealedSecret> set) {
                return new OperationView(
                        index,
                        op.type(),
                        set.module(),
                        null,
                        null,
                        set.servers(),
                        set.monthlyDemand(),
                        set.rebalanceDelay() == null
                                ? null
                                : set.rebalanceDelay().toMillis());
            }
            return new OperationView(index, op.type(), null, null, op.pidIds(), null, null, null);
        }
    }

    /** {@code GET /api/v1/batches/{id}}; the id is text because Snowflake ids exceed 2^53. */
    record Batch(
            String id,
            BatchStatus status,
            String requestedBy,
            Instant createdAt,
            Instant updatedAt,
            List<OperationView> operations,
            List<OperationResult> results) {

        static Batch of(BatchRecord batch) {
            List<Operation<SealedSecret>> ops = batch.operations();
            return new Batch(
                    batch.id().toString(),
                    batch.status(),
                    batch.requestedBy(),
                    batch.createdAt(),
                    batch.updatedAt(),
                    IntStream.range(0, ops.size())
                            .mapToObj(i -> OperationView.of(i, ops.get(i)))
                            .toList(),
                    batch.results());
        }
    }

    /** {@code GET /api/v1/batches?limit=}: the newest batches without their PID lists. */
    record Batches(List<BatchSummary> batches) {}

    /** One operation of a batch in a list: its type, module(s) and how many PIDs it names. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record OperationSummary(OperationType type, ModuleKey module, ModuleKey to, int pids, Integer servers) {
        static OperationSummary of(Operation<SealedSecret> op) {
            OperationView v = OperationView.of(0, op);
            return new OperationSummary(
                    v.type(), v.module(), v.to(), op.pidIds().size(), v.servers());
        }
    }

    /** @param succeeded operations that succeeded (of a final batch) */
    record BatchSummary(
            String id,
            BatchStatus status,
            String requestedBy,
            Instant createdAt,
            Instant updatedAt,
            List<OperationSummary> operations,
            int succeeded,
            int failed) {
        static BatchSummary of(BatchRecord batch) {
            int ok = (int) batch.results().stream().filter(OperationResult::ok).count();
            return new BatchSummary(
                    batch.id().toString(),
                    batch.status(),
                    batch.requestedBy(),
                    batch.createdAt(),
                    batch.updatedAt(),
                    batch.operations().stream().map(OperationSummary::of).toList(),
                    ok,
                    batch.results().size() - ok);
        }
    }

    /**
     * {@code GET /api/v1/audit}.
     *
     * @param next the {@code before} of the next (older) page, {@code null} on the last page
     */
    record Audit(List<AuditView> entries, String next) {}

    /** An audit entry; the id is text because Snowflake ids exceed 2^53. */
    record AuditView(String id, Instant at, String actor, String action, String target, String detail) {
        static AuditView of(AuditEntry e) {
            return new AuditView(String.valueOf(e.id()), e.at(), e.actor(), e.action(), e.target(), e.detail());
        }
    }

    private static SimpleModule coreTypes() {
        SimpleModule module = new SimpleModule("pidpool-core-types");
        module.addSerializer(ModuleKey.class, toStringSerializer());
        module.addSerializer(InstanceId.class, toStringSerializer());
        module.addSerializer(BatchId.class, toStringSerializer());
        module.addSerializer(Epoch.class, new JsonSerializer<>() {
            @Override
            public void serialize(Epoch value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
                gen.writeNumber(value.value());
            }
        });
        return module;
    }

    private static <T> JsonSerializer<T> toStringSerializer() {
        return new JsonSerializer<>() {
            @Override
            public void serialize(T value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
                gen.writeString(value.toString());
            }
        };
    }
}
