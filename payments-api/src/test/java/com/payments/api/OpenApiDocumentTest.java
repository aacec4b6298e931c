package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.payments.api.merchants.ApiRoles;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.annotation.security.PermitAll;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import java.io.IOException;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/openapi.yaml is the merchant API's one document: what merchants, the linter (scripts/openapi-lint.sh) and the
 * client generators read, and what the service serves (the build copies it into META-INF, annotation scanning is off).
 * These tests hold it to the code: the operations are the resources' routes with their callers, the object schemas
 * are the records the API reads and writes, every answer declares its Request-Id.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
class OpenApiDocumentTest {
    private static final java.nio.file.Path COMMITTED = java.nio.file.Path.of("../docs/openapi.yaml");
    private static final java.nio.file.Path CLASSES = java.nio.file.Path.of("target/classes");
    private static final String PACKAGE = "com.payments.api";
    /** Served by the console's own routes, outside the merchant API document (docs/console.md). */
    private static final String CONSOLE = PACKAGE + ".console.";

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Map<Class<? extends Annotation>, String> HTTP_METHODS = Map.of(
            GET.class, "get", POST.class, "post", PUT.class, "put", DELETE.class, "delete", PATCH.class, "patch");

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
        assertThat(YAML.readTree(served)).isEqualTo(committed());
    }

    @Test
    void operationsAreTheRoutesOfTheResourcesWithTheirCallers() throws IOException {
        Map<String, String> documented = new TreeMap<>();
        committed().get("paths").properties().forEach(path -> path.getValue()
                .properties()
                .forEach(operation ->
                        documented.put(operation.getKey() + " " + path.getKey(), security(operation.getValue()))));

        Map<String, String> served = new TreeMap<>();
        for (Class<?> resource : classes()) {
            Path classPath = resource.getAnnotation(Path.class);
            if (classPath == null
                    || resource.isInterface()
                    || resource.getName().startsWith(CONSOLE)) {
                continue;
            }
            for (Method method : resource.getDeclaredMethods()) {
                String httpMethod = HTTP_METHODS.entrySet().stream()
                        .filter(m -> method.isAnnotationPresent(m.getKey()))
                        .map(Map.Entry::getValue)
                        .findFirst()
                        .orElse(null);
                if (httpMethod != null) {
                    Path methodPath = method.getAnnotation(Path.class);
                    String path = classPath.value() + (methodPath == null ? "" : methodPath.value());
                    served.put(httpMethod + " " + path.replaceAll("/+", "/"), caller(resource, method));
                }
            }
        }
        assertThat(served)
                .as("routes of the resources (method path -> security scheme)")
                .isNotEmpty();
        assertThat(documented).as("docs/openapi.yaml's operations").isEqualTo(served);
    }

    @Test
    void objectSchemasAreTheRecordsOfTheApi() throws IOException {
        Map<String, Class<?>> records = classes().stream()
                .filter(Class::isRecord)
                .filter(type -> !type.getName().startsWith(CONSOLE))
                .collect(Collectors.toMap(Class::getSimpleName, type -> type, (a, b) -> a));
        List<String> checked = new ArrayList<>();
        committed().get("components").get("schemas").properties().forEach(schema -> {
            Class<?> record = records.get(schema.getKey());
            JsonNode properties = schema.getValue().get("properties");
            if (record != null && properties != null) {
                Set<String> documented = new TreeSet<>();
                properties.fieldNames().forEachRemaining(documented::add);
                Set<String> components = Arrays.stream(record.getRecordComponents())
                        .map(OpenApiDocumentTest::jsonName)
                        .collect(Collectors.toCollection(TreeSet::new));
                assertThat(documented)
                        .as("properties of schema %s", schema.getKey())
                        .isEqualTo(components);
                checked.add(schema.getKey());
            }
        });
        assertThat(checked)
                .as("the schemas that are records of the code")
                .contains("PaymentView", "RefundView", "PaymentList", "RefundList", "CaptureRequest", "RefundRequest")
                .contains("RefundAccepted", "Problem", "IssuedKey", "ItemView", "ItemList", "Ack");

        List<String> statuses = new ArrayList<>();
        committed().at("/components/schemas/PaymentStatus/enum").forEach(value -> statuses.add(value.asText()));
        assertThat(statuses)
                .containsExactlyElementsOf(
                        Stream.of(PaymentStatus.values()).map(Enum::name).toList());
    }

    @Test
    void everyAnswerDeclaresItsRequestId() throws IOException {
        List<JsonNode> responses = new ArrayList<>();
        committed().get("components").get("responses").forEach(responses::add);
        committed()
                .get("paths")
                .forEach(path ->
                        path.forEach(operation -> operation.get("responses").forEach(responses::add)));
        List<JsonNode> inline = responses.stream().filter(r -> !r.has("$ref")).toList();
        assertThat(inline).isNotEmpty();
        assertThat(inline).allSatisfy(response -> assertThat(
                        response.at("/headers/Request-Id/$ref").asText())
                .as(response.path("description").asText())
                .isEqualTo("#/components/headers/RequestId"));
    }

    /** The name of a record component in JSON: its {@code @JsonProperty} name if it has one (has_more). */
    private static String jsonName(RecordComponent component) {
        JsonProperty renamed = component.getAccessor().getAnnotation(JsonProperty.class);
        return renamed == null ? component.getName() : renamed.value();
    }

    private static JsonNode committed() throws IOException {
        return YAML.readTree(COMMITTED.toFile());
    }

    /** The operation's security scheme as the document names it, "none" when it has none. */
    private static String security(JsonNode operation) {
        JsonNode security = operation.path("security");
        return security.isEmpty() ? "none" : security.get(0).fieldNames().next();
    }

    private static String caller(Class<?> resource, Method method) {
        RolesAllowed roles = method.isAnnotationPresent(RolesAllowed.class)
                ? method.getAnnotation(RolesAllowed.class)
                : resource.getAnnotation(RolesAllowed.class);
        if (roles == null) {
            return resource.isAnnotationPresent(PermitAll.class) ? "pspSignature" : "unannotated";
        }
        Map<String, String> schemes = new HashMap<>();
        schemes.put(ApiRoles.MERCHANT, "merchantKey");
        schemes.put(ApiRoles.OPERATOR, "operatorToken");
        return schemes.getOrDefault(roles.value()[0], "role " + roles.value()[0]);
    }

    private static List<Class<?>> classes() throws IOException {
        java.nio.file.Path root = CLASSES.resolve(PACKAGE.replace('.', '/'));
        try (Stream<java.nio.file.Path> files = java.nio.file.Files.walk(root)) {
            List<Class<?>> classes = new ArrayList<>();
            for (java.nio.file.Path file :
                    files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String name =
                        CLASSES.relativize(file).toString().replace('/', '.').replaceAll("\\.class$", "");
                try {
                    classes.add(
                            Class.forName(name, false, Thread.currentThread().getContextClassLoader()));
                } catch (ClassNotFoundException e) {
                    throw new IllegalStateException(e);
                }
            }
            return classes;
        }
    }
}
