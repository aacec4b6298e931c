package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document the service serves is the committed docs/openapi.yaml: the annotations of rest/ are the one
 * source, the file is what merchants, the linter (scripts/openapi-lint.sh) and the client generators read. Compared as
 * YAML trees (the order of keys in a map is not part of the document; SmallRye does not keep it stable).
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
class OpenApiDocumentTest {
    private static final Path COMMITTED = Path.of("../docs/openapi.yaml");
    private static final Path SERVED = Path.of("target/openapi-served.yaml");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @Test
    void servedDocumentIsTheCommittedOne() throws IOException {
        String served = TestSupport.management()
                .queryParam("format", "yaml")
                .when()
                .get("/q/openapi")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        Files.writeString(SERVED, served, StandardCharsets.UTF_8);
        JsonNode committed = Files.exists(COMMITTED) ? YAML.readTree(COMMITTED.toFile()) : YAML.createObjectNode();
        assertThat(firstDifference("", YAML.readTree(served), committed))
                .as(
                        "the served OpenAPI document differs from docs/openapi.yaml at this place; if the change is"
                                + " intended, run `cp payments-api/%s docs/openapi.yaml`, lint it (scripts/openapi-lint.sh),"
                                + " and note it in CHANGELOG.md with a new info.version (ApiDefinition.VERSION)",
                        SERVED)
                .isNull();
    }

    /** The JSON pointer of the first place where the two trees differ, null when they are equal. */
    static String firstDifference(String at, JsonNode served, JsonNode committed) {
        if (served.isObject() && committed.isObject()) {
            TreeSet<String> names = new TreeSet<>();
            served.fieldNames().forEachRemaining(names::add);
            committed.fieldNames().forEachRemaining(names::add);
            for (String name : names) {
                String path = at + "/" + name.replace("~", "~0").replace("/", "~1");
                if (!served.has(name) || !committed.has(name)) {
                    return path + (served.has(name) ? " (only served)" : " (only committed)");
                }
                String difference = firstDifference(path, served.get(name), committed.get(name));
                if (difference != null) {
                    return difference;
                }
            }
            return null;
        }
        if (served.isArray() && committed.isArray() && served.size() == committed.size()) {
            for (int i = 0; i < served.size(); i++) {
                String difference = firstDifference(at + "/" + i, served.get(i), committed.get(i));
                if (difference != null) {
                    return difference;
                }
            }
            return null;
        }
        return served.equals(committed) ? null : at + ": served " + served + ", committed " + committed;
    }
}
