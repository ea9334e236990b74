package io.pidpool.server.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.model.Names;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.NonRetryableTaskException;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskStore;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The alert webhook as pid-worker tasks: {@link #notifier()} enqueues one task per raised or
 * resolved alert; {@link #handler()} (registered under {@link #TYPE}) POSTs its JSON body to the
 * configured url.
 *
 * <p><b>Delivery.</b> At least once: a task is retried with the worker's exponential backoff
 * ({@code retryBackoff} doubling up to {@code maxRetryBackoff}) until {@code maxAttempts} are used,
 * on a network error, a timeout, a 5xx, 408, 425 or 429; any other 4xx means the receiver refuses
 * this notification for good (FAILED at once); 2xx is done. Every request carries the header
 * {@value #DELIVERY_HEADER} with the task key ({@code alert:<id>:<event>}): a receiver that may see
 * a retry of a request it already handled (its answer was lost) drops the repeat by that id.
 *
 * <p>The enqueue is not in the alert's transaction: if the task table cannot be written, the alert
 * is stored and listed but not sent (logged at WARN).
 */
public final class WebhookTasks {
    private static final Logger log = LoggerFactory.getLogger(WebhookTasks.class);
    public static final String TYPE = "alert-webhook";
    public static final String DELIVERY_HEADER = "X-PidPool-Delivery";
    private static final Set<Integer> RETRYABLE_4XX = Set.of(408, 425, 429);

    static final ObjectMapper JSON = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .build();

    /** The body POSTed for one change. */
    public record Notification(String event, String cluster, AlertView alert) {}

    private final TaskStore store;
    private final String group;
    private final String cluster;
    private final URI url;
    private final int maxAttempts;
    private final Duration timeout;
    private final Clock clock;
    private final HttpClient http;

    public WebhookTasks(
            TaskStore store, String group, String cluster, URI url, int maxAttempts, Duration timeout, Clock clock) {
        this.store = requireNonNull(store, "store");
        this.group = Names.requireToken(group, "group");
        this.cluster = requireNonNull(cluster, "cluster");
        this.url = requireNonNull(url, "url");
        requireArgument(maxAttempts >= 1 && maxAttempts <= 100, "maxAttempts", "must be within 1..100");
        this.maxAttempts = maxAttempts;
        this.timeout = requireNonNull(timeout, "timeout");
        this.clock = requireNonNull(clock, "clock");
        this.http = HttpClient.newBuilder()
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    /** Enqueues one task per change (on the alert service's thread). */
    public AlertNotifier notifier() {
        return (event, alert) -> store.enqueue(task(event, alert), clock.instant());
    }

    NewTask task(AlertNotifier.Event event, StoredAlert alert) {
        String body;
        try {
            body = JSON.writeValueAsString(new Notification(event.name(), cluster, AlertView.of(alert)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("alert " + alert.id() + " is not JSON", e);
        }
        String key = "alert:" + alert.id() + ":" + event.name().toLowerCase(java.util.Locale.ROOT);
        return NewTask.of(group, TYPE, key, body).withMaxAttempts(maxAttempts);
    }

    public TaskHandler handler() {
        return this::deliver;
    }

    private void deliver(Task task) {
        HttpRequest request = HttpRequest.newBuilder(url)
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header(DELIVERY_HEADER, task.key())
                .POST(HttpRequest.BodyPublishers.ofString(task.body()))
                .build();
        HttpResponse<Void> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.discarding());
        } catch (IOException e) {
            throw new IllegalStateException(
                    "webhook " + redacted() + " not reachable (attempt " + task.attempts() + "): " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while calling the webhook", e);
        }
        int status = response.statusCode();
        if (status >= 200 && status < 300) {
            log.debug("webhook delivered {} (attempt {})", task.key(), task.attempts());
            return;
        }
        String problem = "webhook " + redacted() + " answered " + status + " to " + task.key();
        if (status >= 400 && status < 500 && !RETRYABLE_4XX.contains(status)) {
            throw new NonRetryableTaskException(problem + "; not retried");
        }
        throw new IllegalStateException(problem + " (attempt " + task.attempts() + " of " + task.maxAttempts() + ")");
    }

    /** The url without user info, query or fragment (where tokens hide). */
    String redacted() {
        return url.getScheme() + "://" + url.getHost() + (url.getPort() < 0 ? "" : ":" + url.getPort()) + url.getPath();
    }
}
