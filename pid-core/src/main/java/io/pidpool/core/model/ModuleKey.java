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

    /**
     * The order of the text forms, computed part by part without building them (this runs for every
     * map operation of the leader's views): the separator sorts below every character a part may hold,
     * so comparing the parts in turn gives the same result.
     */
    @Override
    public int compareTo(ModuleKey other) {
        int c = department.compareTo(other.department);
        if (c != 0) {
            return c;
        }
        c = module.compareTo(other.module);
        return c != 0 ? c : system.compareTo(other.system);
    }

    @Override
    public String toString() {
        return department + SEPARATOR + module + SEPARATOR + system;
    }
}
