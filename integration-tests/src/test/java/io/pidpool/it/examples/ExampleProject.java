package io.pidpool.it.examples;

import java.nio.file.Path;

/**
 * Where the {@code examples/} project lives, and the local Maven repository its scripts resolve its
 * class path against ({@code pidpool.localRepository}, set by the failsafe configuration).
 */
final class ExampleProject {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path DIR = ROOT.resolve("examples");

    private ExampleProject() {}

    static String localRepository() {
        return System.getProperty(
                "pidpool.localRepository",
                Path.of(System.getProperty("user.home"), ".m2", "repository").toString());
    }
}
