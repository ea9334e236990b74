package io.pidpool.it.bench;

import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.secret.SecretSealer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;

/**
 * JMH: sealing and opening one account password with {@link SecretSealer} against the baseline of
 * the same AES-GCM work with a {@code Cipher} made for every secret (what the sealer did before it
 * kept one per thread). A batch of 10,000 PIDs seals 10,000 passwords on the request's thread, and
 * the SDK opens each assigned PID's password. Its {@code main} prints the ratios. Command:
 * docs/benchmarks.md.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class SealerBenchmark {
    private static final byte[] KEY = new byte[32];
    private static final byte[] AAD = "pidpool/secret/v1:bench".getBytes(StandardCharsets.UTF_8);
    private static final byte[] PASSWORD = "a-password-of-24-letters".getBytes(StandardCharsets.UTF_8);

    private SecretSealer sealer;
    private SealedSecret sealed;
    private SecretKeySpec key;
    private SecureRandom random;
    private byte[] baselineSealed;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        sealer = SecretSealer.builder().key("bench", KEY).current("bench").build();
        sealed = sealer.seal(new String(PASSWORD, StandardCharsets.UTF_8));
        key = new SecretKeySpec(KEY, "AES");
        random = new SecureRandom();
        baselineSealed = cipherPerSecretSeal();
    }

    @Benchmark
    public SealedSecret seal() {
        return sealer.seal("a-password-of-24-letters");
    }

    @Benchmark
    public String open() {
        return sealer.open(sealed);
    }

    /** Baseline: a new cipher for every secret, as {@code Cipher.getInstance} then init and seal. */
    @Benchmark
    public byte[] cipherPerSecretSeal() throws Exception {
        byte[] iv = new byte[SecretSealer.IV_BYTES];
        random.nextBytes(iv);
        Cipher cipher = Cipher.getInstance(SecretSealer.TRANSFORMATION);
        cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(SecretSealer.TAG_BITS, iv));
        cipher.updateAAD(AAD);
        byte[] body = cipher.doFinal(PASSWORD);
        byte[] out = new byte[iv.length + body.length];
        System.arraycopy(iv, 0, out, 0, iv.length);
        System.arraycopy(body, 0, out, iv.length, body.length);
        return out;
    }

    /** Baseline: a new cipher for every secret opened. */
    @Benchmark
    public byte[] cipherPerSecretOpen() throws Exception {
        Cipher cipher = Cipher.getInstance(SecretSealer.TRANSFORMATION);
        cipher.init(
                Cipher.DECRYPT_MODE,
                key,
                new GCMParameterSpec(SecretSealer.TAG_BITS, baselineSealed, 0, SecretSealer.IV_BYTES));
        cipher.updateAAD(AAD);
        return cipher.doFinal(baselineSealed, SecretSealer.IV_BYTES, baselineSealed.length - SecretSealer.IV_BYTES);
    }

    public static void main(String[] args) throws Exception {
        // JMH keeps its lock file in java.io.tmpdir, which the bench profile points into target/
        java.nio.file.Files.createDirectories(java.nio.file.Path.of(System.getProperty("java.io.tmpdir")));
        List<String> options = new ArrayList<>(List.of(
                args.length == 0 ? new String[] {"-f", "1", "-wi", "3", "-i", "5", "-w", "1s", "-r", "1s"} : args));
        options.add(SealerBenchmark.class.getName());
        Collection<RunResult> results = new Runner(new CommandLineOptions(options.toArray(String[]::new))).run();
        Map<String, Double> score = new TreeMap<>();
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            score.put(
                    name.substring(name.lastIndexOf('.') + 1),
                    r.getPrimaryResult().getScore());
        }
        System.out.println();
        System.out.println(String.format(
                Locale.ROOT,
                "seal: %.2f µs, a cipher per secret %.2f µs (ratio %.2f); open: %.2f µs, a cipher per secret"
                        + " %.2f µs (ratio %.2f)",
                score.get("seal"),
                score.get("cipherPerSecretSeal"),
                score.get("seal") / score.get("cipherPerSecretSeal"),
                score.get("open"),
                score.get("cipherPerSecretOpen"),
                score.get("open") / score.get("cipherPerSecretOpen")));
    }
}
