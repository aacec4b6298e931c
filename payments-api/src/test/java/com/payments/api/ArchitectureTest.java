package com.payments.api;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * payments-api's packages import only downward (README, "payments-api"): the features ({@code capture},
 * {@code refunds}, {@code resolver}, {@code pspevents}, {@code console}, {@code operations}, {@code merchants},
 * {@code merchantwebhooks}, {@code events}, and any package added later) may import the core and each other without a cycle;
 * the core (the domain records at the root, {@code payment}, {@code idempotency}, {@code common}, {@code client},
 * {@code config}, {@code rest}) never imports a feature.
 */
class ArchitectureTest {
    private static final String ROOT = "com.payments.api";

    /** The packages below the features, each with its sub-packages. */
    private static final String[] CORE = {
        ROOT,
        ROOT + ".payment..",
        ROOT + ".idempotency..",
        ROOT + ".common..",
        ROOT + ".client..",
        ROOT + ".config..",
        ROOT + ".rest.."
    };

    /** A longer statement goes to a .sql file; the longest ones left in Java have 14 lines. */
    private static final int LONGEST_TEXT_BLOCK = 15;

    /** The services whose statements the rule covers (README: every service's long statements are in .sql files). */
    private static final List<String> SERVICES =
            List.of("payments-api", "outbox-relay", "refunds-worker", "webhook-delivery", "reconciler");

    private static final Pattern TEXT_BLOCK = Pattern.compile("\"\"\"\n(.*?)\"\"\"", Pattern.DOTALL);

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(ROOT);
    }

    @Test
    void noPackageCycle() {
        slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(classes);
    }

    @Test
    void theCoreNeverImportsAFeature() {
        noClasses()
                .that()
                .resideInAnyPackage(CORE)
                .should()
                .dependOnClassesThat(resideInAPackage(ROOT + "..")
                        .and(resideInAnyPackage(CORE).negate()))
                .check(classes);
    }

    /**
     * Long statements live in {@code src/main/resources/sql/*.sql} (README), loaded with {@code SqlResource}: no text
     * block of any service's main code is longer than {@link #LONGEST_TEXT_BLOCK} lines. One rule for all services,
     * here because it reads source files, not classes: the tests run in this module's folder, beside the others.
     */
    @Test
    void longStatementsLiveInSqlFiles() throws IOException {
        List<String> tooLong = new ArrayList<>();
        for (String service : SERVICES) {
            Path sources = Path.of("..", service, "src/main/java");
            List<Path> javaFiles;
            try (Stream<Path> files = Files.walk(sources)) {
                javaFiles = files.filter(f -> f.toString().endsWith(".java")).toList();
            }
            assertThat(javaFiles).as(service + " sources").isNotEmpty();
            for (Path file : javaFiles) {
                Matcher block = TEXT_BLOCK.matcher(Files.readString(file));
                while (block.find()) {
                    long lines = block.group(1).lines().count();
                    if (lines > LONGEST_TEXT_BLOCK) {
                        tooLong.add(file + ": " + lines + " lines");
                    }
                }
            }
        }
        assertThat(tooLong).isEmpty();
    }

    /** The rules see the whole module: a rule over no classes would pass whatever the code. */
    @Test
    void rulesSeeTheFeaturesAndTheCore() {
        for (String pkg : new String[] {".capture", ".refunds", ".resolver", ".pspevents", ".common", ".idempotency"}) {
            assertThat(classes.containPackage(ROOT + pkg)).as(pkg).isTrue();
        }
    }
}
