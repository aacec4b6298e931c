package com.payments.sandbox.rest;

import com.payments.sandbox.service.SettlementService;
import com.payments.sandbox.service.SettlementService.SettlementFile;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import java.time.DateTimeException;
import java.time.LocalDate;
import org.jboss.resteasy.reactive.RestResponse;

/** {@code GET /v1/settlements/{yyyy-mm-dd}.csv}: the settlement file of a UTC day (docs/architecture.md §5). */
@Path("/v1/settlements")
public class SettlementResource {

    static final String TEXT_CSV = "text/csv";

    private final SettlementService settlements;

    public SettlementResource(SettlementService settlements) {
        this.settlements = settlements;
    }

    @GET
    @Path("/{date: \\d{4}-\\d{2}-\\d{2}}.csv")
    @Produces(TEXT_CSV)
    public RestResponse<String> file(@PathParam("date") String date) {
        LocalDate day = parse(date);
        if (day == null) {
            return RestResponse.status(RestResponse.Status.BAD_REQUEST);
        }
        SettlementFile file = settlements.render(day);
        return RestResponse.ResponseBuilder.ok(file.csv(), TEXT_CSV)
                .header("Psp-Sandbox-Injected-Discrepancies", file.injected().size())
                .build();
    }

    static LocalDate parse(String date) {
        try {
            return LocalDate.parse(date);
        } catch (DateTimeException e) {
            return null;
        }
    }
}
