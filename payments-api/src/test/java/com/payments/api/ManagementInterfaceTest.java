package com.payments.api;

import static com.payments.api.TestSupport.ADMIN;
import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.management;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.unique;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * With {@code payments.admin.management-only=true} (as the Kubernetes manifests run it) the merchant port serves only
 * the merchant API and the webhook: health, metrics, OpenAPI and the operator API answer 404 there and are served on
 * the management port, which in turn serves no merchant API.
 */
@QuarkusTest
@TestProfile(ManagementInterfaceTest.ManagementOnly.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
class ManagementInterfaceTest {
    static final List<String> EXTENSION_PATHS =
            List.of("/q/health/ready", "/q/health/live", "/q/health/started", "/q/metrics", "/q/openapi");

    public static class ManagementOnly implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("payments.admin.management-only", "true");
        }
    }

    @Test
    void extensionEndpointsAreOnlyOnTheManagementPort() {
        for (String path : List.of(EXTENSION_PATHS, List.of("/q/swagger-ui/")).stream()
                .flatMap(List::stream)
                .toList()) {
            management().get(path).then().statusCode(200);
            given().get(path).then().statusCode(404);
        }
    }

    @Test
    void operatorApiIsOnlyOnTheManagementPort() {
        String name = unique("mgmt");
        var created = createMerchant(management(), name).then().statusCode(201).extract();
        String merchantId = created.path("merchantId");
        merchant(created.path("apiKey")).get("/v1/payments?orderId=any").then().statusCode(200);
        admin(management())
                .post("/v1/admin/merchants/" + merchantId + "/keys")
                .then()
                .statusCode(201);
        admin(management()).get("/v1/admin/operations").then().statusCode(200);

        createMerchant(given(), unique("refused"))
                .then()
                .statusCode(404)
                .contentType("application/problem+json")
                .body("code", org.hamcrest.Matchers.is("not_found"));
        for (String path : List.of(
                "/v1/admin/merchants/" + merchantId + "/keys",
                "/v1/admin/operations",
                "//v1/admin/operations",
                "/v1/./admin/operations",
                "/v1/admin",
                "/console",
                "/console/payments")) {
            int status = admin(given()).post(path).then().extract().statusCode();
            assertThat(status).as(path).isEqualTo(404);
        }
    }

    /**
     * No spelling of an operator path reaches the operator API or the console on the merchant port: matrix
     * parameters, encoded slashes and dots, doubled slashes, dot segments, other letter case, trailing slashes and
     * absolute-form targets, sent byte for byte over a socket (an HTTP client would normalise them first). Each of
     * them is first shown to work on the management port where it can (the resource answers 200 there), so a 404 on
     * the merchant port means refused, not misspelt.
     */
    @Test
    void noSpellingOfAnOperatorPathReachesTheMerchantPort() {
        Map<String, String> auth = Map.of("Authorization", "Bearer " + ADMIN);
        int merchantPort = io.restassured.RestAssured.port;
        assertThat(RawHttp.send(managementPort(), "GET", "/v1/admin/operations", auth, null)
                        .status())
                .isEqualTo(200);
        assertThat(RawHttp.send(managementPort(), "GET", "/console/login", auth, null)
                        .status())
                .isEqualTo(200);
        List<String> reached = new java.util.ArrayList<>();
        for (String path : OPERATOR_PATH_SPELLINGS) {
            RawHttp.Answer answer = RawHttp.send(merchantPort, "GET", path, auth, null);
            if (answer.status() != 404 && answer.status() != 400) {
                reached.add(path + " -> " + answer.status());
            }
        }
        assertThat(reached).as("operator paths reached on the merchant port").isEmpty();
    }

    static final List<String> OPERATOR_PATH_SPELLINGS = List.of(
            "/v1/admin/operations",
            "/v1/admin/operations/",
            "/v1/admin/operations//",
            "/v1/admin/operations?limit=1",
            "/v1/admin/operations;x=1",
            "/v1/admin;x=1/operations",
            "/v1;x=1/admin/operations",
            "/v1/admin;/operations",
            "/v1;/admin;/operations;",
            "/v1%2Fadmin/operations",
            "/v1%2fadmin%2foperations",
            "%2Fv1/admin/operations",
            "/v1/admin%2Foperations",
            "/v1/%61dmin/operations",
            "/%76%31/%61%64%6d%69%6e/operations",
            "//v1/admin/operations",
            "/v1//admin/operations",
            "/v1/admin//operations",
            "///v1///admin///operations",
            "/v1/./admin/operations",
            "/./v1/admin/operations",
            "/v1/admin/./operations",
            "/v1/x/../admin/operations",
            "/x/../v1/admin/operations",
            "/../v1/admin/operations",
            "/v1/%2e/admin/operations",
            "/v1/x/%2e%2e/admin/operations",
            "/v1/x/%2E%2E/admin/operations",
            "/v1/x%2f..%2fadmin/operations",
            "/V1/ADMIN/OPERATIONS",
            "/v1/Admin/operations",
            "/V1/admin/operations",
            "http://localhost/v1/admin/operations",
            "http://localhost//v1/admin/operations",
            "/console/login",
            "/console/login/",
            "/console/login;x=1",
            "/console;x=1/login",
            "/console;/login",
            "/console%2Flogin",
            "/console%2flogin",
            "%2Fconsole/login",
            "/%63onsole/login",
            "//console/login",
            "/console//login",
            "/./console/login",
            "/x/../console/login",
            "/x/%2e%2e/console/login",
            "/CONSOLE/login",
            "/Console/login",
            "/CONSOLE/LOGIN",
            "http://localhost/console/login");

    private static int managementPort() {
        return org.eclipse.microprofile.config.ConfigProvider.getConfig()
                .getValue("quarkus.management.test-port", Integer.class);
    }

    @Test
    void merchantApiIsOnlyOnTheMerchantPort() {
        merchant(KEY_A).get("/v1/payments?orderId=any").then().statusCode(200);
        management()
                .header("Authorization", "Bearer " + KEY_A)
                .get("/v1/payments?orderId=any")
                .then()
                .statusCode(404);
    }

    static io.restassured.response.Response createMerchant(RequestSpecification on, String name) {
        return admin(on)
                .contentType(ContentType.JSON)
                .body("{\"name\":\"" + name + "\"}")
                .post("/v1/admin/merchants");
    }

    static RequestSpecification admin(RequestSpecification on) {
        return on.header("Authorization", "Bearer " + ADMIN);
    }
}
