package com.payments.infra;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A PostgreSQL 15 server of its own with {@code ssl=on}, on a free loopback port, whose certificate is issued by a CA
 * generated here; and a second, unrelated CA that must not be trusted. The server certificate names
 * {@code 127.0.0.1} and {@code localhost} (subject alternative names), so clients can verify it in {@code verify-full}
 * mode. The server's superuser is {@code postgres} without a password; TCP clients must use TLS (pg_hba
 * {@code hostssl} only). Embedded like {@link Postgres}'s default server (zonky), also when run as root.
 */
public final class TlsPostgres implements AutoCloseable {
    private final EmbeddedPostgres server;
    private final Path caFile;
    private final Path wrongCaFile;

    private TlsPostgres(EmbeddedPostgres server, Path caFile, Path wrongCaFile) {
        this.server = server;
        this.caFile = caFile;
        this.wrongCaFile = wrongCaFile;
    }

    public static TlsPostgres start() {
        try {
            Path dir = Files.createTempDirectory("tls-postgres");
            KeyPair caKeys = keyPair();
            X509Certificate ca = caCertificate("payments test CA", caKeys);
            KeyPair serverKeys = keyPair();
            X509Certificate serverCert = serverCertificate(ca, caKeys.getPrivate(), serverKeys);
            X509Certificate wrongCa = caCertificate("payments test CA", keyPair()); // same name, other key

            Path caFile = write(dir.resolve("ca.crt"), pem("CERTIFICATE", ca.getEncoded()));
            Path wrongCaFile = write(dir.resolve("wrong-ca.crt"), pem("CERTIFICATE", wrongCa.getEncoded()));
            Path certFile = write(dir.resolve("server.crt"), pem("CERTIFICATE", serverCert.getEncoded()));
            Path keyFile = write(
                    dir.resolve("server.key"),
                    pem("PRIVATE KEY", serverKeys.getPrivate().getEncoded()));
            // PostgreSQL refuses a private key that others can read.
            Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
            // TCP only with TLS (hostssl): a client that does not negotiate it is refused, whatever it asks for.
            Path hbaFile = write(
                    dir.resolve("pg_hba.conf"),
                    """
                    local   all all              trust
                    hostssl all all 127.0.0.1/32 trust
                    hostssl all all ::1/128      trust
                    """);
            EmbeddedPostgres server = EmbeddedPostgres.builder()
                    .setServerConfig("listen_addresses", "127.0.0.1")
                    .setServerConfig("fsync", "off")
                    .setServerConfig("ssl", "on")
                    .setServerConfig("ssl_cert_file", certFile.toString())
                    .setServerConfig("ssl_key_file", keyFile.toString())
                    .setServerConfig("hba_file", hbaFile.toString())
                    .setRegisterShutdownHook(true)
                    .start();
            return new TlsPostgres(server, caFile, wrongCaFile);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start PostgreSQL with TLS", e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("Cannot generate the test certificates", e);
        }
    }

    /** JDBC URL of a database on this server, verify-full against {@code ca}, addressed by {@code host}. */
    public String jdbcUrl(String host, String database, Path ca) {
        return "jdbc:postgresql://" + host + ":" + port() + "/" + database + "?sslmode=verify-full&sslrootcert=" + ca;
    }

    public int port() {
        return server.getPort();
    }

    /** PEM file of the CA that issued the server's certificate. */
    public Path caFile() {
        return caFile;
    }

    /** PEM file of a CA with the same name but another key: trusting only it must fail verification. */
    public Path wrongCaFile() {
        return wrongCaFile;
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static KeyPair keyPair() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }

    private static X509Certificate caCertificate(String name, KeyPair keys)
            throws GeneralSecurityException, OperatorCreationException, IOException {
        X500Name subject = new X500Name("CN=" + name);
        X509v3CertificateBuilder builder =
                new JcaX509v3CertificateBuilder(subject, serial(), notBefore(), notAfter(), subject, keys.getPublic());
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        builder.addExtension(
                Extension.subjectKeyIdentifier,
                false,
                new JcaX509ExtensionUtils().createSubjectKeyIdentifier(keys.getPublic()));
        return sign(builder, keys.getPrivate());
    }

    private static X509Certificate serverCertificate(X509Certificate ca, PrivateKey caKey, KeyPair keys)
            throws GeneralSecurityException, OperatorCreationException, IOException {
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
                ca, serial(), notBefore(), notAfter(), new X500Name("CN=localhost"), keys.getPublic());
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
        builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
        builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
            new GeneralName(GeneralName.iPAddress, "127.0.0.1"), new GeneralName(GeneralName.dNSName, "localhost")
        }));
        builder.addExtension(
                Extension.authorityKeyIdentifier, false, new JcaX509ExtensionUtils().createAuthorityKeyIdentifier(ca));
        return sign(builder, caKey);
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey key)
            throws GeneralSecurityException, OperatorCreationException {
        return new JcaX509CertificateConverter()
                .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(key)));
    }

    private static BigInteger serial() {
        return new BigInteger(64, new SecureRandom());
    }

    private static Date notBefore() {
        return Date.from(Instant.now().minus(Duration.ofHours(1)));
    }

    private static Date notAfter() {
        return Date.from(Instant.now().plus(Duration.ofDays(2)));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static Path write(Path file, String content) throws IOException {
        return Files.writeString(file, content, StandardCharsets.US_ASCII);
    }
}
