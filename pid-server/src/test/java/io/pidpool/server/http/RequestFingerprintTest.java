package io.pidpool.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class RequestFingerprintTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String of(String body) throws Exception {
        JsonNode tree = JSON.readTree(body);
        return RequestFingerprint.of(tree);
    }

    @Test
    void fieldOrderAndWhitespaceDoNotMatterValuesDo() throws Exception {
        String a = of("{\"operations\":[{\"type\":\"RESET_QUOTA\",\"pids\":[\"u1\"]}]}");
        String b = of("{ \"operations\" : [ { \"pids\" : [ \"u1\" ], \"type\" : \"RESET_QUOTA\" } ] }");

        assertThat(a).isEqualTo(b).hasSize(64).matches("[0-9a-f]{64}");
        assertThat(of("{\"operations\":[{\"type\":\"RESET_QUOTA\",\"pids\":[\"u2\"]}]}"))
                .isNotEqualTo(a);
        assertThat(of("{\"operations\":[{\"type\":\"RESET_QUOTA\",\"pids\":[\"u1\",\"u2\"]}]}"))
                .isNotEqualTo(a);
        assertThat(of("{\"a\":1}")).isNotEqualTo(of("{\"a\":\"1\"}"));
    }

    @Test
    void secretsAreLeftOutEverythingElseOfAPidCounts() throws Exception {
        String template = "{\"operations\":[{\"type\":\"ADD\",\"module\":\"fin#risk#scorer\",\"pids\":"
                + "[{\"id\":\"u1\",\"secret\":\"%s\",\"monthlyQuota\":%d}]}]}";

        assertThat(of(template.formatted("pw-one", 10))).isEqualTo(of(template.formatted("pw-two", 10)));
        assertThat(of(template.formatted("pw-one", 10))).isNotEqualTo(of(template.formatted("pw-one", 11)));
    }
}
