package io.pidpool.it.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The package rules that keep the product's shape: a core that depends on nothing but the JDK and
 * slf4j, adapters (ZooKeeper, Redis, the database, HTTP) at the edges, modules that depend only
 * downwards, and an SDK whose public package shows applications no type they may not rely on.
 */
@AnalyzeClasses(packages = "io.pidpool", importOptions = ArchitectureTest.ProductionCode.class)
class ArchitectureTest {
    /** The product's main classes: neither test directories nor the modules' test jars. */
    static final class ProductionCode implements ImportOption {
        @Override
        public boolean includes(Location location) {
            return !location.contains("/test-classes/") && !location.contains("-tests.jar");
        }
    }

    /** Where application code may look: the SDK's public package and what it is built from. */
    private static final String SDK_API = "io.pidpool.client";

    @ArchTest
    static final ArchRule coreDependsOnTheJdkAndSlf4jOnly = classes()
            .that()
            .resideInAPackage("io.pidpool.core..")
            .should()
            .onlyDependOnClassesThat()
            .resideInAnyPackage("java..", "javax..", "org.slf4j..", "io.pidpool.core..")
            .because("the core holds the decisions; every store and coordination service is a port");

    @ArchTest
    static final ArchRule sdkKnowsNoServerOrWorker = noClasses()
            .that()
            .resideInAPackage("io.pidpool.client..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("io.pidpool.server..", "io.pidpool.worker..")
            .because("business servers embed the SDK without the server's code");

    @ArchTest
    static final ArchRule workerKnowsNoServer = noClasses()
            .that()
            .resideInAPackage("io.pidpool.worker..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("io.pidpool.server..")
            .because("pid-worker runs on its own; the server embeds it, not the other way round");

    @ArchTest
    static final ArchRule theDatabaseIsReachedThroughItsAdapters = noClasses()
            .that()
            .resideOutsideOfPackages(
                    "io.pidpool.server.jdbc..", "io.pidpool.worker.task..", "io.pidpool.worker.runtime..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("org.jdbi..", "com.zaxxer..", "java.sql..")
            .because("SQL lives in the JDBC adapters; everything else sees repository ports");

    @ArchTest
    static final ArchRule theHttpLayerTalksToPortsNotToStores = noClasses()
            .that()
            .resideInAPackage("io.pidpool.server.http..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("org.apache.curator..", "org.apache.zookeeper..", "org.redisson..", "org.jdbi..")
            .because("an operator request is recorded through the core's ports, never by a route itself");

    @ArchTest
    static final ArchRule httpFrameworkStaysInTheHttpLayer = noClasses()
            .that()
            .resideOutsideOfPackages(
                    "io.pidpool.server.http..", "io.pidpool.server.security..", "io.pidpool.server.runtime..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("io.javalin..")
            .because("routes are an edge; the leader and the stores do not know about HTTP");

    @ArchTest
    static final ArchRule sdkPublicApiExposesNoInternalType = classes()
            .that()
            .resideInAPackage(SDK_API)
            .and()
            .arePublic()
            .should(exposeOnlyPublicApiTypes())
            .because("applications compile against io.pidpool.client alone; the rest may change in any release");

    /**
     * Types of libraries the application owns and may hand to the SDK to share: its Redisson client,
     * its Curator client (single-flight), its Micrometer registry.
     */
    private static final Set<String> SHARED_LIBRARY_TYPES = Set.of(
            "org.redisson.api.RedissonClient",
            "org.apache.curator.framework.CuratorFramework",
            "io.micrometer.core.instrument.MeterRegistry");

    /**
     * Public and protected members of the SDK's public classes may use only JDK types, slf4j, types of
     * the public package itself and {@link #SHARED_LIBRARY_TYPES}.
     */
    private static ArchCondition<JavaClass> exposeOnlyPublicApiTypes() {
        DescribedPredicate<JavaClass> allowed = new DescribedPredicate<>("a JDK, public SDK or shared library type") {
            @Override
            public boolean test(JavaClass type) {
                JavaClass base = type.isArray() ? type.getBaseComponentType() : type;
                String pkg = base.getPackageName();
                return base.isPrimitive()
                        || pkg.startsWith("java.")
                        || pkg.startsWith("org.slf4j")
                        || pkg.equals(SDK_API)
                        || SHARED_LIBRARY_TYPES.contains(base.getName());
            }
        };
        return new ArchCondition<>("expose only JDK and public SDK types") {
            @Override
            public void check(JavaClass owner, ConditionEvents events) {
                Stream.<JavaMember>concat(owner.getCodeUnits().stream(), owner.getFields().stream())
                        .filter(member -> member.getModifiers().contains(JavaModifier.PUBLIC)
                                || member.getModifiers().contains(JavaModifier.PROTECTED))
                        .forEach(member -> exposed(member).stream()
                                .filter(type -> !allowed.test(type))
                                .forEach(type -> events.add(SimpleConditionEvent.violated(
                                        member, member.getFullName() + " exposes " + type.getName()))));
            }
        };
    }

    private static Set<JavaClass> exposed(JavaMember member) {
        if (member instanceof JavaField field) {
            return field.getType().getAllInvolvedRawTypes();
        }
        JavaCodeUnit unit = (JavaCodeUnit) member;
        var types = new java.util.HashSet<>(unit.getReturnType().getAllInvolvedRawTypes());
        unit.getParameterTypes().forEach(p -> types.addAll(p.getAllInvolvedRawTypes()));
        unit.getExceptionTypes().forEach(types::add);
        return types;
    }
}
