package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;

/**
 * A business module that uses PIDs, written {@code department#module#system} (e.g.
 * {@code fin#risk#scorer}). The text form is used verbatim as a ZooKeeper node name and database
 * key, so every part is restricted to characters that are safe in all of them.
 */
public record ModuleKey(String department, String module, String system) implements Comparable<ModuleKey> {
    public static final char SEPARATOR = '#';

    public ModuleKey {
        Names.requireToken(department, "module.department");
        Names.requireToken(module, "module.module");
        Names.requireToken(system, "module.system");
    }

    /** Parses {@code department#module#system}. */
    public static ModuleKey parse(String text) {
        requireArgument(text != null, "module", "module is required");
        String[] parts = text.split("#", -1);
        requireArgument(parts.length == 3, "module", "module must look like department#module#system, was '%s'", text);
        return new ModuleKey(parts[0], parts[1], parts[2]);
    }

    @Override
    public int compareTo(ModuleKey other) {
        return toString().compareTo(other.toString());
    }

    @Override
    public String toString() {
        return department + SEPARATOR + module + SEPARATOR + system;
    }
}
