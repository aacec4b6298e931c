package com.payments.api.config;

import io.quarkus.flyway.FlywayConfigurationCustomizer;
import jakarta.inject.Singleton;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;
import org.flywaydb.core.api.configuration.FluentConfiguration;

/**
 * With {@code payments.db.require-application-role=true} (the migration Job of every deployment), a migration refuses
 * to start before the role {@code payments_app} exists. Migration V79 grants the role what each table needs only if it
 * exists when V79 runs, and otherwise warns and grants nothing (a single-login database for a benchmark or a
 * developer's own server, where the services log in as the owner). A deployment must not take that path: this check
 * stops the Job before any migration runs, so the operator creates the role and starts the Job again.
 */
@Singleton
public class ApplicationRoleRequirement implements FlywayConfigurationCustomizer {
    static final String ROLE = "payments_app";

    private final boolean required;

    public ApplicationRoleRequirement(
            @ConfigProperty(name = "payments.db.require-application-role", defaultValue = "false") boolean required) {
        this.required = required;
    }

    @Override
    public void customize(FluentConfiguration configuration) {
        if (required) {
            configuration.callbacks(new Check());
        }
    }

    /** The Flyway callback: before a migration, the role must exist. */
    public static final class Check implements Callback {
        @Override
        public boolean supports(Event event, Context context) {
            return event == Event.BEFORE_MIGRATE;
        }

        @Override
        public boolean canHandleInTransaction(Event event, Context context) {
            return true;
        }

        @Override
        public void handle(Event event, Context context) {
            try (PreparedStatement st =
                            context.getConnection().prepareStatement("SELECT 1 FROM pg_roles WHERE rolname = ?");
                    ResultSet rs = bind(st).executeQuery()) {
                if (!rs.next()) {
                    throw new FlywayException("The role " + ROLE + " does not exist: create it before the migration"
                            + " (CNPG: spec.managed.roles; else CREATE ROLE " + ROLE + " LOGIN PASSWORD ...)."
                            + " See docs/deployment.md, \"Database roles\".");
                }
            } catch (SQLException e) {
                throw new FlywayException("Cannot check that the role " + ROLE + " exists", e);
            }
        }

        private static PreparedStatement bind(PreparedStatement st) throws SQLException {
            st.setString(1, ROLE);
            return st;
        }

        @Override
        public String getCallbackName() {
            return "application role required";
        }
    }
}
